import DaemonCore
import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `sleep SECONDS|end|chapter|off` on the daemon in process, in real time: the pause after the
/// time, the fade measured in the FIFO output's PCM, the volume back for the next `play`, the
/// cancellations, `status`'s `sleep` and the ACKs.
@Suite(.serialized) struct SleepTimerTests {
    /// The RMS level of each quarter second of 44.1 kHz 16-bit stereo PCM.
    static func levels(_ pcm: Data) -> [Double] {
        let window = FIFOCapture.bytesPerSecond / 4
        return pcm.withUnsafeBytes { raw -> [Double] in
            let samples = raw.bindMemory(to: Int16.self)
            let perWindow = window / 2
            return stride(from: 0, to: samples.count - perWindow + 1, by: perWindow).map { start in
                var sum = 0.0
                for index in start..<(start + perWindow) { sum += Double(samples[index]) * Double(samples[index]) }
                return (sum / Double(perWindow)).squareRoot()
            }
        }
    }

    /// A FIFO output's pipe in `directory`, and a reader copying what comes out of it into a file.
    static func capturedFIFO(in directory: URL) throws -> (fifo: String, capture: URL, reader: ChildProcess) {
        let fifo = directory.appendingPathComponent("audio.fifo").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let capture = directory.appendingPathComponent("audio.raw")
        return (fifo, capture, try FIFOCapture.reader(fifo, into: capture))
    }

    @Test func sleepSecondsFadesOutPausesAndTheVolumeIsBackForTheNextPlay() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (fifo, capture, reader) = try Self.capturedFIFO(in: directory)
        defer { reader.terminate() }
        let item = TestMedia.all[0]
        let daemon = try InProcessDaemon(directory: directory) {
            $0.files = [item.path]
            $0.outputs = [try #require(OutputChoice(argument: "fifo:\(fifo)"))]
        }
        defer { daemon.stop() }
        try daemon.waitForElapsed(atLeast: 1)
        let client = try daemon.client()
        let set = ChildProcess.now()
        #expect(try client.request("sleep 3") == ["OK"])
        let status = try daemon.status()
        #expect(status["sleep"] == "3" || status["sleep"] == "2", "\(status)")
        let paused = try daemon.waitForStatus(timeout: 10) { $0["state"] == "pause" }
        let after = ChildProcess.now() - set
        print("sleep 3: paused after \(after) s")
        #expect(paused["state"] == "pause" && after >= 2.9 && after < 4.5, "paused after \(after) s: \(paused)")
        #expect(paused["sleep"] == nil && paused["volume"] == "100", "\(paused)")
        // Played again: at the volume it was.
        #expect(try client.request("play") == ["OK"])
        try daemon.waitForElapsed(atLeast: (Double(paused["elapsed"] ?? "0") ?? 0) + 1.5, timeout: 8)
        #expect(try client.request("stop") == ["OK"])
        daemon.stop()
        reader.terminate()

        let levels = Self.levels(try Data(contentsOf: capture))
        let full = levels.prefix(4).max() ?? 0
        print("sleep 3: levels \(levels.map { Int($0) })")
        #expect(full > 1000, "the tone is heard before the timer: \(levels.prefix(8))")
        // The FIFO gets nothing while paused: the fade's end is the quietest quarter, and the
        // tone (a chord, whose quarters differ by a quarter) falls over the 3 s before it, by thirds.
        let end = try #require(levels.indices.min { levels[$0] < levels[$1] })
        try #require(end >= 12, "the fade is in the capture: \(levels)")
        let thirds = stride(from: end - 11, through: end - 3, by: 4).map { start in levels[start..<(start + 4)].reduce(0, +) / 4 / full }
        print("sleep 3: the fade's thirds at \(thirds.map { Int($0 * 100) }) % of the level before")
        #expect(thirds[0] > thirds[1] && thirds[1] > thirds[2], "the level falls: \(thirds)")
        #expect(thirds[1] > 0.3 && thirds[1] < 0.7, "about half in the middle second: \(thirds)")
        #expect(thirds[2] < 0.35 && levels[end] < 0.15 * full, "nearly silent at the end: \(thirds), \(levels[end])")
        // After `play`, the tone at its full level again.
        #expect(levels[(end + 1)...].contains { $0 > 0.8 * full }, "the volume came back: \(levels[end...].map { Int($0) })")
    }

    /// `sleep end` 5 s before a constant tone's end: its last 10 s are faded where it can, so
    /// the level is already down to about half when set and falls to nothing at the end, where
    /// the next item waits paused.
    @Test func sleepEndFadesTheItemsLastSeconds() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (fifo, capture, reader) = try Self.capturedFIFO(in: directory)
        defer { reader.terminate() }
        let tone = try TestMedia.makeTone(seconds: 12, in: directory, name: "tone")
        let daemon = try InProcessDaemon(directory: directory) {
            $0.files = [tone.path, TestMedia.all[1].path]
            $0.outputs = [try #require(OutputChoice(argument: "fifo:\(fifo)"))]
        }
        defer { daemon.stop() }
        try daemon.waitForElapsed(atLeast: 1)
        let client = try daemon.client()
        #expect(try client.request("seekcur 7") == ["OK"])
        #expect(try client.request("sleep end") == ["OK"])
        // Paused at the item's end, then (a moment later) on the next item's start.
        let paused = try daemon.waitForStatus(timeout: 10) { $0["state"] == "pause" && $0["song"] == "1" }
        #expect(paused["state"] == "pause" && paused["song"] == "1" && paused["sleep"] == nil, "\(paused)")
        daemon.stop()
        reader.terminate()

        let levels = Self.levels(try Data(contentsOf: capture))
        let full = levels.prefix(4).max() ?? 0
        print("sleep end: levels \(levels.map { Int($0) })")
        try #require(full > 1000 && levels.count >= 24, "\(levels)")
        // The last 5 s in quarters of 1.25 s: a fade from about half to nothing.
        let last = Array(levels.suffix(20))
        let quarters = stride(from: 0, to: 20, by: 5).map { last[$0..<($0 + 5)].reduce(0, +) / 5 / full }
        print("sleep end: the last 5 s by quarters at \(quarters.map { Int($0 * 100) }) % of the level before")
        #expect(zip(quarters, quarters.dropFirst()).allSatisfy { $0 > $1 }, "the level falls: \(quarters)")
        #expect(quarters[0] > 0.25 && quarters[0] < 0.6, "about half 5 s before the end: \(quarters)")
        #expect(quarters[3] < 0.2, "nearly silent at the end: \(quarters)")
    }

    @Test func sleepEndPausesAtTheItemsEndAndCancellationsAndStatus() throws {
        let daemon = try InProcessDaemon {
            $0.files = [TestMedia.all[0].path, TestMedia.all[1].path]
            $0.outputs = [.null]
        }
        defer { daemon.stop() }
        try daemon.waitForElapsed(atLeast: 0.2)
        let client = try daemon.client()
        let watcher = try daemon.client()
        try watcher.send("idle options\n")
        #expect(try client.request("sleep 100") == ["OK"])
        #expect(try watcher.readReply() == ["changed: options", "OK"])
        #expect(try daemon.status()["sleep"] == "100" || (try daemon.status()["sleep"]) == "99")
        // `pause` cancels it.
        try watcher.send("idle options\n")
        #expect(try client.request("pause 1") == ["OK"])
        #expect(try watcher.readReply() == ["changed: options", "OK"])
        #expect(try daemon.status()["sleep"] == nil)
        #expect(try client.request("play") == ["OK"])
        // A cancelled `end` leaves the item's end alone: the queue goes on.
        #expect(try client.request("sleep end") == ["OK"])
        #expect(try client.request("pause 1") == ["OK"])
        #expect(try client.request("play") == ["OK"])
        #expect(try client.request("seekcur 16") == ["OK"])
        let onNext = try daemon.waitForStatus(timeout: 8) { $0["song"] == "1" }
        #expect(onNext["song"] == "1" && onNext["state"] == "play", "\(onNext)")
        // `stop` cancels it.
        #expect(try client.request("sleep end") == ["OK"])
        #expect(try daemon.status()["sleep"] == "end")
        #expect(try client.request("stop") == ["OK"])
        #expect(try daemon.status()["sleep"] == nil)
        // `end`: paused where the item ends, the next one current at its start.
        #expect(try client.request("play 0") == ["OK"])
        #expect(try client.request("seekcur 15") == ["OK"])
        #expect(try client.request("sleep end") == ["OK"])
        let paused = try daemon.waitForStatus(timeout: 8) { $0["state"] == "pause" && $0["song"] == "1" }
        #expect(paused["state"] == "pause" && paused["song"] == "1" && paused["sleep"] == nil, "\(paused)")
        #expect((Double(paused["elapsed"] ?? "9") ?? 9) < 0.1, "\(paused)")
        // No chapters in this item: refused.
        #expect(try client.request("play") == ["OK"])
        #expect(try client.request("sleep chapter") == ["ACK [50@0] {sleep} no chapters: the item being heard has none"])
        #expect(try daemon.status()["sleep"] == nil)
    }

    @Test func badArgumentsAreRefusedAndChangeNothing() throws {
        let daemon = try InProcessDaemon { $0.files = [TestMedia.all[0].path] }
        defer { daemon.stop() }
        let client = try daemon.client()
        let expected = "expected seconds from 1 to 86400, end, chapter or off"
        #expect(try client.request("sleep -5") == ["ACK [2@0] {sleep} Negative time: -5; \(expected)"])
        #expect(try client.request("sleep abc") == ["ACK [2@0] {sleep} Not a time: abc; \(expected)"])
        #expect(try client.request("sleep 1e99") == ["ACK [2@0] {sleep} Time too long: 1e99; \(expected)"])
        #expect(try client.request("sleep 0") == ["ACK [2@0] {sleep} Time too short: 0; \(expected)"])
        #expect(try client.request("sleep nan") == ["ACK [2@0] {sleep} Not a time: nan; \(expected)"])
        #expect(try client.request("sleep") == ["ACK [2@0] {sleep} wrong number of arguments for \"sleep\""])
        #expect(try daemon.status()["sleep"] == nil)
        // Stopped: nothing to put to sleep.
        #expect(try client.request("stop") == ["OK"])
        #expect(try client.request("sleep 10") == ["ACK [55@0] {sleep} Not playing: a sleep timer needs something playing"])
        #expect(try client.request("sleep off") == ["OK"])
        #expect(try daemon.status()["sleep"] == nil)
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A daemon whose output goes through alsa-lib's `file` plugin into a capture file, paced in
/// real time by a private PulseAudio null sink (``PulseServer``), with a control socket and a
/// music directory of short tones made for the test.
///
/// Real-time pacing matters here: it is what lets the controller choose the look-ahead (and a
/// client change a mode) while an item is heard, as on a real device; unpaced, the render
/// thread would reach every boundary before the controller had a say.
final class CapturingDaemon {
    /// A tone: its file name in the music directory, and what libmpg123 decodes of it.
    struct Tone {
        let name: String
        let pcm: Data
    }

    let tones: [Tone]
    let control: ControlDaemon
    var process: ChildProcess { control.process }
    private let pulse: PulseServer
    private let directory: URL
    private let capture: URL
    let client: UnixSocketClient

    /// Makes a tone per entry of `seconds` (each at its own pitch, so no two decode alike) and
    /// starts the daemon with an empty queue and no saved state.
    init(toneSeconds seconds: [Double]) throws {
        directory = try TestMedia.scratchDirectory()
        let music = directory.appendingPathComponent("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        tones = try seconds.enumerated().map { index, length in
            let url = try TestMedia.makeTone(seconds: length, frequency: 330 + 110 * index, in: music, name: "tone\(index)")
            return Tone(name: url.lastPathComponent, pcm: try ReferenceDecoder.decode(url).pcm)
        }
        pulse = try PulseServer()
        capture = directory.appendingPathComponent("capture.raw")
        let config = directory.appendingPathComponent("asoundrc")
        // A pipe appends across the reopening a pause or a stop may cause (a plain file would be rewritten).
        try """
            pcm.capture {
                type file
                slave.pcm "pulsenull"
                file "|cat >> \(capture.path)"
                format "raw"
            }
            """.write(to: config, atomically: true, encoding: .utf8)
        control = try ControlDaemon(["--music-directory", music.path, "--no-state"], outputs: ["alsa:capture"], directory: directory,
                                    environment: ["ALSA_CONFIG_PATH": "\(pulse.alsaConfigPath):\(config.path)"], readyTimeout: 10)
        client = try UnixSocketClient.connect(path: control.socket)
        _ = try client.readLine(timeout: 5)
    }

    /// Sends `commands` as one command list (so nothing happens between them) and expects `OK`.
    func run(_ commands: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        let text = commands.count == 1 ? commands[0] : (["command_list_begin"] + commands + ["command_list_end"]).joined(separator: "\n")
        let reply = try request(text)
        #expect(reply == ["OK"], "\(commands)", sourceLocation: sourceLocation)
    }

    /// Sends `text` and reads the reply; a daemon that does not answer is reported with its log.
    private func request(_ text: String) throws -> [String] {
        do {
            return try client.request(text, timeout: 10)
        } catch {
            throw UnixSocketError("\(text.debugDescription): \(error); the daemon's stderr: \(process.standardError.suffix(3000))")
        }
    }

    /// Adds every tone, in order.
    func addAll() throws {
        for tone in tones { try run("add \"\(tone.name)\"") }
    }

    /// `status` as a dictionary.
    func status() throws -> [String: String] {
        let lines = try request("status")
        return Dictionary(lines.compactMap { line in
            line.firstRange(of: ": ").map { (String(line[..<$0.lowerBound]), String(line[$0.upperBound...])) }
        }, uniquingKeysWith: { $1 })
    }

    /// Polls `status` until `condition` holds or `timeout` passes; returns the last status.
    @discardableResult
    func waitForStatus(timeout: Double, _ condition: ([String: String]) -> Bool) throws -> [String: String] {
        try poll(timeout: timeout, status, until: condition)
    }

    /// The tones the player has started, in order (its `Now playing:` lines), as indices into ``tones``.
    var started: [Int] {
        process.lines.compactMap { line in
            guard line.text.hasPrefix("Now playing: ") else { return nil }
            let name = line.text.dropFirst("Now playing: ".count)
            return tones.firstIndex { $0.name == name }
        }
    }

    /// Waits until at least `count` tones have started.
    @discardableResult
    func waitForStarted(count: Int, timeout: Double) -> [Int] {
        let deadline = ChildProcess.now() + timeout
        while started.count < count && ChildProcess.now() < deadline { usleep(10_000) }
        return started
    }

    /// Ends the daemon (its output closes, the file plugin writes what it holds, `cat` finishes)
    /// and returns everything the output was given.
    ///
    /// alsa-lib's `file` plugin keeps the last buffer's worth to itself until the device is
    /// drained or closed, so the daemon is given all the time it needs to close it: a daemon
    /// killed (or crashed) instead is an error of its own, not a short capture.
    func finish(sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
        client.close()
        process.send(SIGTERM)
        let status = process.wait(timeout: 30)
        #expect(status == 0, "the daemon did not exit cleanly (\(status.map(String.init) ?? "still running")); stderr: \(process.standardError.suffix(3000))",
                sourceLocation: sourceLocation)
        process.terminate()
        return (try? Data(contentsOf: capture)) ?? Data()
    }

    /// The tones at `indices`, decoded and joined.
    func expected(_ indices: [Int]) -> Data {
        indices.reduce(into: Data()) { $0.append(tones[$1].pcm) }
    }

    func stop() {
        process.terminate()
        pulse.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

/// Checks that `actual` is exactly `expected`, naming the first differing byte (and the frame
/// of which tone it falls in) if not.
func expectSameAudio(_ actual: Data, _ expected: Data, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual.count == expected.count, "\(what): captured \(actual.count) bytes, expected \(expected.count)", sourceLocation: sourceLocation)
    guard actual != expected else { return }
    let first = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    Issue.record("\(what): the capture differs first at byte \(first.map(String.init) ?? "end (one is a prefix of the other)")", sourceLocation: sourceLocation)
}

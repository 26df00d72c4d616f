import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The saved state across restarts: a stop, a crash, a corrupt file, a vanished file.
@Suite(.serialized) struct StateRestoreTests {
    static func elapsed(_ status: [String: String]) -> Double { status["elapsed"].flatMap(Double.init) ?? -1 }

    @Test func restartAfterTermResumesWithinHalfASecondAndAfterKillWithinFiveAndAHalf() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let arguments = ["--media", TestMedia.directory.path, "--output", "null"]

        // Play into the second item, then stop gracefully.
        var daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }
        try daemon.request("next")
        usleep(2_500_000)
        var before = try daemon.status()
        let stoppedAt = ChildProcess.now()
        daemon.process.send(SIGTERM)
        let status = daemon.process.wait(timeout: 2)
        #expect(status == 0, "SIGTERM exits 0 within 2 s (after \(ChildProcess.now() - stoppedAt) s)")
        let file = stateHome.appendingPathComponent("queueplayerd/state.json")
        #expect(FileManager.default.fileExists(atPath: file.path))

        daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        var after = try daemon.status()
        #expect(after["song"] == "1" && before["song"] == "1")
        #expect(after["state"] == "play")
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.5, "was at \(Self.elapsed(before)) s, resumed at \(Self.elapsed(after)) s")

        // Play on past a periodic save, then crash.
        usleep(6_500_000)
        before = try daemon.status()
        daemon.process.send(SIGKILL)
        daemon.process.wait(timeout: 2)
        daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        after = try daemon.status()
        #expect(after["song"] == before["song"])
        let lost = Self.elapsed(before) - Self.elapsed(after)
        #expect(lost >= -0.1 && lost <= 5.5, "was at \(Self.elapsed(before)) s, resumed at \(Self.elapsed(after)) s")

        // Paused stays paused.
        try daemon.request("pause")
        before = try daemon.status()
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 2) == 0)
        daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        after = try daemon.status()
        #expect(after["state"] == "pause")
        #expect(after["song"] == before["song"])
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.01)
        #expect(daemon.process.standardError.contains("restored the queue (4 items) at item \(Int(before["song"]!)! + 1)"))
    }

    @Test func aCorruptOrFutureStateIsMovedAsideAndTheDaemonStarts() throws {
        for content in ["{\"version\": 1, \"queue\": [", "{\"version\": 99, \"queue\": [], \"position\": 0, \"paused\": true}", "\u{0}\u{1}binary"] {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            let directory = stateHome.appendingPathComponent("queueplayerd")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try content.write(to: directory.appendingPathComponent("state.json"), atomically: true, encoding: .utf8)

            let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
            let status = try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }
            #expect(status["state"] == "play" && status["song"] == "0", "it starts on --media as if nothing was saved")
            #expect(daemon.process.standardError.contains("warning"), "\(daemon.process.standardError)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            let aside = try #require(names.first { $0.hasPrefix("state.json.unusable-") }, "\(names)")
            #expect(try String(contentsOf: directory.appendingPathComponent(aside), encoding: .utf8) == content, "kept as it was")
        }
    }

    @Test func filesThatVanishedAreDroppedWithAWarning() throws {
        let stateHome = try TestMedia.scratchDirectory()
        let library = try TestMedia.scratchDirectory()
        defer {
            try? FileManager.default.removeItem(at: stateHome)
            try? FileManager.default.removeItem(at: library)
        }
        for url in TestMedia.all { try FileManager.default.copyItem(at: url, to: library.appendingPathComponent(url.lastPathComponent)) }
        let arguments = ["--media", library.path, "--output", "null"]
        var daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        try daemon.request("play 2")
        usleep(1_000_000)
        let before = try daemon.status()
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 2) == 0)
        try FileManager.default.removeItem(at: library.appendingPathComponent(TestMedia.all[0].lastPathComponent))

        daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        let after = try daemon.status()
        #expect(after["playlistlength"] == "3")
        #expect(after["song"] == "1", "the third item is now the second")
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.5)
        #expect(daemon.process.standardError.contains("dropped from the saved queue, it no longer exists: \(library.path)/\(TestMedia.all[0].lastPathComponent)"))
    }

    @Test func noStateNeitherRestoresNorSaves() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state"], stateHome: stateHome)
        try daemon.request("next")
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 2) == 0)
        #expect(!FileManager.default.fileExists(atPath: stateHome.appendingPathComponent("queueplayerd").path))
    }
}

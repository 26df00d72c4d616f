import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The saved state across restarts: a stop, a crash, a vanished file. (A corrupt file:
/// DaemonInProcessTests' suite of the same name.)
@Suite(.serialized) struct StateRestoreTests {
    static func elapsed(_ status: [String: String]) -> Double { status["elapsed"].flatMap(Double.init) ?? -1 }

    @Test func restartAfterTermResumesWithinHalfASecondAndAfterKillWithinFiveAndAHalf() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let arguments = ["--media", TestMedia.directory.path, "--output", "null"]
        // Restarts resume: no --media, which would replace the saved queue.
        let restart = ["--music-directory", TestMedia.directory.path, "--output", "null"]

        // Play into the second item, then stop gracefully.
        var daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }
        try daemon.request("next")
        var before = try daemon.waitForStatus(timeout: 10) { $0["song"] == "1" && Self.elapsed($0) >= 2.5 }
        try #require(before["song"] == "1" && Self.elapsed(before) >= 2.5)
        let stoppedAt = ChildProcess.now()
        daemon.process.send(SIGTERM)
        let status = daemon.process.wait(timeout: 2)
        #expect(status == 0, "SIGTERM exits 0 within 2 s (after \(ChildProcess.now() - stoppedAt) s)")
        let file = stateHome.appendingPathComponent("queueplayerd/state.json")
        #expect(FileManager.default.fileExists(atPath: file.path))

        daemon = try LifecycleDaemon(restart, stateHome: stateHome)
        var after = try daemon.status()
        #expect(after["song"] == "1" && before["song"] == "1")
        #expect(after["state"] == "play")
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.5, "was at \(Self.elapsed(before)) s, resumed at \(Self.elapsed(after)) s")

        // Play on past a periodic save (the file's position moves on by itself), then crash.
        let resumedAt = Self.elapsed(after)
        #expect(waitUntil(timeout: 12) { ((try? ShutdownTests.readState(stateHome))?.position ?? 0) > resumedAt + 1 },
                "a periodic save while playing")
        let asked = ChildProcess.now()
        before = try daemon.status()
        daemon.process.send(SIGKILL)
        // The daemon played on (and may have saved) between the status request and the kill:
        // where it was killed is at most that much past `before` (a loaded machine can hold the
        // test between the two).
        let playedOn = ChildProcess.now() - asked
        daemon.process.wait(timeout: 2)
        daemon = try LifecycleDaemon(restart, stateHome: stateHome)
        after = try daemon.status()
        #expect(after["song"] == before["song"])
        let lost = Self.elapsed(before) - Self.elapsed(after)
        #expect(lost >= -(playedOn + 0.1) && lost <= 5.5,
                "was at \(Self.elapsed(before)) s (\(playedOn) s before the kill), resumed at \(Self.elapsed(after)) s")

        // Paused stays paused.
        try daemon.request("pause")
        before = try daemon.status()
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 2) == 0)
        daemon = try LifecycleDaemon(restart, stateHome: stateHome)
        after = try daemon.status()
        #expect(after["state"] == "pause")
        #expect(after["song"] == before["song"])
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.01)
        // Log lines come through their own pipe: they may arrive after the socket's reply.
        let restored = "restored the queue (4 items) at item \(Int(before["song"]!)! + 1)"
        #expect(daemon.waitForStandardError { $0.contains(restored) }, "\(daemon.process.standardError)")
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
        let before = try daemon.waitForStatus(timeout: 5) { $0["song"] == "2" && Self.elapsed($0) >= 1 }
        try #require(before["song"] == "2")
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 2) == 0)
        try FileManager.default.removeItem(at: library.appendingPathComponent(TestMedia.all[0].lastPathComponent))

        daemon = try LifecycleDaemon(["--music-directory", library.path, "--output", "null"], stateHome: stateHome)
        let after = try daemon.status()
        #expect(after["playlistlength"] == "3")
        #expect(after["song"] == "1", "the third item is now the second")
        #expect(abs(Self.elapsed(after) - Self.elapsed(before)) <= 0.5)
        let dropped = "dropped from the saved queue, it no longer exists: \(library.path)/\(TestMedia.all[0].lastPathComponent)"
        #expect(daemon.waitForStandardError { $0.contains(dropped) }, "\(daemon.process.standardError)")
    }

    /// `make run` is `--media Media`: a state saved while another directory played must not
    /// replace what was asked for. `--media DIR` plays DIR from its first item, and saves that.
    @Test func mediaReplacesAQueueSavedFromAnotherDirectory() throws {
        let stateHome = try TestMedia.scratchDirectory()
        let library = try TestMedia.scratchDirectory()
        defer {
            try? FileManager.default.removeItem(at: stateHome)
            try? FileManager.default.removeItem(at: library)
        }
        let other = library.appendingPathComponent("other.mp3")
        try FileManager.default.copyItem(at: TestMedia.all[1], to: other)
        var daemon = try LifecycleDaemon(["--media", library.path, "--output", "null"], stateHome: stateHome)
        try daemon.request("pause 1")
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 5) == 0)
        let saved = try ShutdownTests.readState(stateHome)
        try #require(saved.queue == [other.path])

        daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
        let status = try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }
        #expect(status["state"] == "play" && status["song"] == "0" && status["playlistlength"] == "\(TestMedia.all.count)",
                "Media/ plays from its first item: \(status)")
        #expect(!daemon.process.standardError.contains("restored the queue"), "\(daemon.process.standardError)")
        #expect(waitUntil(timeout: 5) { (try? ShutdownTests.readState(stateHome))?.queue == TestMedia.all.map(\.path) },
                "and Media/ is what is saved from then on")

        // Without --media or FILE arguments, the saved queue comes back.
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 5) == 0)
        daemon = try LifecycleDaemon(["--music-directory", library.path, "--output", "null"], stateHome: stateHome)
        #expect(try daemon.status()["playlistlength"] == "\(TestMedia.all.count)")
        // The log line comes through its own pipe: it may arrive after the socket's reply.
        #expect(daemon.waitForStandardError { $0.contains("restored the queue") }, "\(daemon.process.standardError)")
    }

    /// A second daemon that cannot listen (the first answers on the socket) stops with an
    /// error and leaves the first one's saved state alone.
    @Test func aDaemonThatCannotListenSavesNothing() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let first = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
        try first.request("pause 1")
        #expect(waitUntil(timeout: 5) { (try? ShutdownTests.readState(stateHome))?.paused == true })

        let second = try ChildProcess(["--music-directory", TestMedia.directory.path, "--output", "null", "--socket", first.socket],
                                      environment: ["XDG_STATE_HOME": stateHome.path])
        let status = second.wait(timeout: 10)
        #expect(status != nil && status != 0, "stderr: \(second.standardError)")
        #expect(second.standardError.contains("another queueplayerd is already listening"), "\(second.standardError)")
        // The first daemon's queue, not the second's empty one (the position may still have been saved again).
        let state = try ShutdownTests.readState(stateHome)
        #expect(state.queue == TestMedia.all.map(\.path) && state.current == 0 && state.paused, "\(state)")
        #expect(try first.status()["state"] == "pause", "the first daemon goes on")
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

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM stops the daemon cleanly whatever it is doing: status 0 within a second, the
/// state file whole and up to date, every client's connection closed.
@Suite(.serialized) struct ShutdownTests {
    /// Each case is run this many times; a second is the bound for most of them, 3 s for all.
    static let repetitions = 5

    /// The saved state, parsed: the queue's files and the current position.
    struct State: Decodable {
        var version: Int
        var queue: [String]
        var current: Int?
        var position: Double
        var paused: Bool
    }

    static func readState(_ stateHome: URL) throws -> State {
        let data = try Data(contentsOf: stateHome.appendingPathComponent("queueplayerd/state.json"))
        return try JSONDecoder().decode(State.self, from: data)
    }

    /// SIGTERM (or `signal`), then how long the daemon took to exit and with which status.
    static func terminate(_ daemon: LifecycleDaemon, with signal: Int32 = SIGTERM) -> (status: Int32?, seconds: Double) {
        let sentAt = ChildProcess.now()
        daemon.process.send(signal)
        let status = daemon.process.wait(timeout: 5)
        return (status, ChildProcess.now() - sentAt)
    }

    /// The exit times: every one within 3 s, and most (all but one in five) within 1 s.
    static func expectPrompt(_ seconds: [Double], _ what: String) {
        let prompt = seconds.filter { $0 <= 1 }.count
        #expect(Double(prompt) >= 0.8 * Double(seconds.count), "\(what): exit times \(seconds.map { String(format: "%.3f", $0) })")
        #expect(seconds.allSatisfy { $0 <= 3 }, "\(what): exit times \(seconds)")
    }

    /// A queue change, SIGTERM at once: the change's save is still being written.
    @Test func sigtermDuringASaveExitsZeroWithTheStateWhole() throws {
        var times: [Double] = []
        for _ in 0..<Self.repetitions {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
            try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
            try daemon.request("delete 3")
            let (status, seconds) = Self.terminate(daemon)
            #expect(status == 0, "stderr: \(daemon.process.standardError)")
            times.append(seconds)
            let state = try Self.readState(stateHome)
            #expect(state.queue == TestMedia.all.prefix(3).map(\.path), "the last change is saved")
            #expect(state.current == 0 && !state.paused)
            #expect(!daemon.process.standardError.contains("error"), "\(daemon.process.standardError)")
        }
        Self.expectPrompt(times, "during a save")
    }

    /// SIGTERM while `update` reads the tags of 2000 files in a background task.
    @Test func sigtermDuringAnUpdateExitsZeroWithTheStateWhole() throws {
        let (library, song) = try makeLargeLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        var times: [Double] = []
        for _ in 0..<Self.repetitions {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            let daemon = try LifecycleDaemon(["--music-directory", library.path, "--output", "null"], stateHome: stateHome)
            try daemon.request("add song.mp3")
            #expect(try daemon.request("update")["updating_db"] != nil)
            #expect(try daemon.status()["updating_db"] != nil, "the update still runs when SIGTERM comes")
            let (status, seconds) = Self.terminate(daemon)
            #expect(status == 0, "stderr: \(daemon.process.standardError)")
            times.append(seconds)
            let state = try Self.readState(stateHome)
            #expect(state.queue == [song.path])
        }
        Self.expectPrompt(times, "during an update")
    }

    /// 100 clients connected (half of them idle, waiting for changes): SIGTERM closes every
    /// connection and the daemon exits 0.
    @Test func sigtermWithAHundredClientsClosesThemAllAndExitsZero() throws {
        var times: [Double] = []
        for _ in 0..<Self.repetitions {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            // The hundred, and the test's own client for `status`: more than mpd's default 100.
            let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--max-clients", "128"],
                                             stateHome: stateHome)
            var clients: [UnixSocketClient] = []
            defer { clients.forEach { $0.close() } }
            for index in 0..<100 {
                let client = try UnixSocketClient(path: daemon.socket)
                #expect(try client.readLine()?.hasPrefix("OK MPD ") == true)
                if index % 2 == 0 { try client.send("idle\n") }
                clients.append(client)
            }
            #expect(try daemon.status()["state"] == "play", "the daemon answers with 100 clients connected")
            let (status, seconds) = Self.terminate(daemon)
            #expect(status == 0, "stderr: \(daemon.process.standardError)")
            times.append(seconds)
            let open = clients.filter { !$0.waitForEndOfFile(timeout: 1).closed }.count
            #expect(open == 0, "\(open) connections were left open")
            #expect(try Self.readState(stateHome).queue == TestMedia.all.map(\.path))
        }
        Self.expectPrompt(times, "with 100 clients")
    }

    /// The control socket is the first thing to go: once the daemon says it is stopping, the
    /// event loop closes the socket and every connection, while the audio already written to
    /// the device (half a second of buffer, through a private PulseAudio) still plays out. A
    /// client that connects then is refused, not greeted by a daemon about to vanish. Judged
    /// over every attempt made while the daemon stops, in several repetitions.
    @Test func theControlSocketClosesFirstWhileTheAudioPlaysOut() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        var lateGreetings: [Double] = []
        var drains: [Double] = []
        for _ in 0..<Self.repetitions {
            let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "alsa:pulsenull", "--no-state"],
                                             environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
            try #require(waitUntil(timeout: 5) { (try? pulse.playbackStreamCount()) == 1 }, "playing through the device")
            let sentAt = ChildProcess.now()
            daemon.process.send(SIGTERM)
            try #require(daemon.waitForStandardError(timeout: 5) { $0.contains("stopping") })
            let stoppingAt = ChildProcess.now()
            // Connect again and again until the daemon is gone.
            while daemon.process.isRunning {
                let attemptAt = ChildProcess.now()
                guard let client = try? UnixSocketClient(path: daemon.socket) else { continue }
                if (try? client.readLine(timeout: 0.5))??.hasPrefix("OK MPD ") == true, daemon.process.isRunning {
                    lateGreetings.append(attemptAt - stoppingAt)
                }
                client.close()
            }
            #expect(daemon.process.wait(timeout: 5) == 0, "stderr: \(daemon.process.standardError)")
            drains.append(ChildProcess.now() - sentAt)
        }
        // Attempts made within the first 0.1 s may still race the closing socket.
        let late = lateGreetings.filter { $0 > 0.1 }
        #expect(late.isEmpty, "greeted \(late.map { String(format: "%.3f", $0) }) s after \"stopping\"; exits after \(drains)")
        // The property means something only if the daemon outlived that first 0.1 s.
        let median = drains.sorted()[drains.count / 2]
        #expect(median > 0.2, "the daemon exited \(drains) s after SIGTERM: no time to see the socket closed")
    }

    /// SIGINT (Ctrl-C) is SIGTERM's twin: status 0, the last change saved.
    @Test func sigintStopsTheSameWay() throws {
        var times: [Double] = []
        for _ in 0..<Self.repetitions {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
            try daemon.request("play 2")
            let (status, seconds) = Self.terminate(daemon, with: SIGINT)
            #expect(status == 0, "stderr: \(daemon.process.standardError)")
            times.append(seconds)
            #expect(try Self.readState(stateHome).current == 2)
            #expect(daemon.process.standardError.contains("stopping"))
        }
        Self.expectPrompt(times, "SIGINT")
    }

    /// `--once` stops on the same path as SIGTERM once the queue has played: status 0 after
    /// the life cycle's "stopping", with the control socket's clients disconnected.
    @Test func onceStopsOnTheSamePathWhenTheQueueEnds() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 0.5, in: directory, name: "short")
        let daemon = try LifecycleDaemon(["--once", "--output", "null", tone.path])
        let client = try UnixSocketClient(path: daemon.socket)
        defer { client.close() }
        #expect(try client.readLine()?.hasPrefix("OK MPD ") == true)
        #expect(daemon.process.wait(timeout: 5) == 0, "stderr: \(daemon.process.standardError)")
        #expect(client.waitForEndOfFile(timeout: 1).closed)
        let stderr = daemon.process.standardError
        let finished = try #require(stderr.range(of: "the queue has finished"), "\(stderr)")
        let stopping = try #require(stderr.range(of: "stopping"), "\(stderr)")
        #expect(finished.upperBound <= stopping.lowerBound)
    }
}

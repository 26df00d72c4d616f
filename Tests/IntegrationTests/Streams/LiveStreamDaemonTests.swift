import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Internet radio through the daemon: icecast2 on 127.0.0.1 with ffmpeg as its
/// source (``IcecastServer``), the daemon as a process, real clients (mpc).
@Suite(.serialized) struct LiveStreamDaemonTests {
    /// One station for the tests that leave it running (started once for the suite).
    static let station = SuiteServer { try IcecastServer() }

    /// `currentsong` shows the URL, the stream's name (`icy-name`) and its title (`StreamTitle`);
    /// `status` says `play` with the buffer ahead and no `waiting` while audio flows, and has no
    /// `duration`; a new title wakes an `mpc idle` with `player`, as a new song does.
    @Test func currentSongShowsNameAndTitleAndANewTitleWakesIdlePlayer() throws {
        try Self.station.use(currentSongShowsNameAndTitleAndANewTitleWakesIdlePlayer)
    }

    private func currentSongShowsNameAndTitleAndANewTitleWakesIdlePlayer(_ station: IcecastServer) throws {
        try station.setTitle("First Song")
        let daemon = try StreamDaemon(["--output", "null", "--no-state"])
        #expect(try daemon.request("urlhandlers") == ["handler: http://", "handler: https://", "OK"])
        try daemon.run("add \(station.url.absoluteString)")
        try daemon.run("play")
        let playing = try daemon.wait(timeout: 15) { $0["state"] == "play" && $0.elapsedSeconds >= 1 }
        #expect(playing["state"] == "play" && playing.elapsedSeconds >= 1, "\(playing); \(daemon.process.standardError.suffix(2000))")
        #expect(playing["waiting"] == nil && playing["duration"] == nil, "\(playing)")
        let buffer = try #require(playing["buffer"], "status has buffer: for a stream: \(playing)")
        #expect(buffer.wholeMatch(of: /\d+\.\d/) != nil && (Double(buffer) ?? 0) > 0, "buffer: \(buffer)")

        let song = try daemon.wait(for: "currentsong", timeout: 10) { $0["Title"] == "First Song" }
        #expect(song["file"] == station.url.absoluteString)
        #expect(song["Name"] == station.streamName)
        #expect(song["Title"] == "First Song", "\(song)")
        let line = try daemon.mpc("current")
        expectSuccess(line, stdout: ["\(station.streamName): First Song"])

        let idle = try ChildProcess(program: "/usr/bin/mpc", ["idle"], environment: ["MPD_HOST": daemon.socket])
        defer { idle.terminate() }
        #expect(waitUntil(timeout: 5) { hasConnectedUnixSocket(idle.processIdentifier) })
        try station.setTitle("Second Song")
        #expect(idle.wait(timeout: 10) == 0, "mpc idle ends on the new title")
        #expect(idle.lines.map(\.text) == ["player"])
        #expect(try daemon.values("currentsong")["Title"] == "Second Song")
        daemon.stop()
    }

    /// A station in the queue is saved by URL, with no position into it, and plays again from
    /// its live edge after a restart.
    @Test func aRestartBringsTheStationBackPlaying() throws {
        try Self.station.use(aRestartBringsTheStationBackPlaying)
    }

    private func aRestartBringsTheStationBackPlaying(_ station: IcecastServer) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var daemon = try StreamDaemon(["--output", "null"], directory: directory)
        try daemon.run("add \(station.url.absoluteString)")
        try daemon.run("play")
        try #require(try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 2 }.elapsedSeconds >= 2)
        daemon.stop()
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("state/queueplayerd/state.json")))
        let state = try #require(saved as? [String: Any])
        #expect(state["queue"] as? [String] == [station.url.absoluteString])
        #expect(state["position"] as? Double == 0 && state["paused"] as? Bool == false, "\(state)")
        daemon = try StreamDaemon(["--output", "null"], directory: directory)
        let restored = try daemon.wait(timeout: 15) { $0["state"] == "play" && $0.elapsedSeconds > 0.5 }
        #expect(restored["state"] == "play" && restored["waiting"] == nil, "\(restored); \(daemon.process.standardError.suffix(2000))")
        #expect(try daemon.values("currentsong")["Name"] == station.streamName)
        daemon.stop()
    }

    /// The WebSocket pushes a stream's new title with its name and song id (`stream` event).
    @Test func theWebSocketPushesANewTitle() throws {
        try Self.station.use(theWebSocketPushesANewTitle)
    }

    private func theWebSocketPushesANewTitle(_ station: IcecastServer) throws {
        let daemon = try StreamDaemon(["--output", "null", "--no-state", "--http", "127.0.0.1:0"])
        var base: String?
        #expect(waitUntil(timeout: 10) { base = webAddress(in: daemon.process.standardError); return base != nil })
        let id = try #require(replyValue(try daemon.request("addid \(station.url.absoluteString)"), "Id"))
        try daemon.run("play")
        try #require(try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 1 }.elapsedSeconds >= 1)
        let script = TestMedia.integrationTests.appendingPathComponent("Scripts/ws_stream.py").path
        let client = try ChildProcess(program: "/usr/bin/python3", [script, try #require(base), "Pushed Title"])
        defer { client.terminate() }
        #expect(client.waitForLine(timeout: 10) { $0 == "connected" } != nil, "\(client.standardError)")
        try station.setTitle("Pushed Title")
        #expect(client.wait(timeout: 25) == 0, "\(client.lines.map(\.text)) \(client.standardError)")
        let last = try #require(client.lines.last?.text)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(event["title"] as? String == "Pushed Title")
        #expect(event["name"] as? String == station.streamName)
        #expect((event["songid"] as? Int).map(String.init) == id)
        daemon.stop()
    }

    /// The station goes down under a playing daemon: `status` stays `play` and says it waits,
    /// the daemon near idle and answering meanwhile (``idleWhileWaiting(_:label:)``);
    /// the station comes back and audio resumes within 2 s of the next try (the tries back off
    /// from 0.5 s, doubling, so the next one comes at most as long after the outage began as
    /// the outage has lasted).
    @Test func aStationThatGoesDownIsWaitedForAndPlaysOnWhenItIsBack() throws {
        let station = try IcecastServer(streamName: "flaky station")
        let daemon = try StreamDaemon(["--output", "null", "--no-state", "--stream-retry-time", "120"])
        try daemon.run("add \(station.url.absoluteString)")
        try daemon.run("play")
        let playing = try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 2 }
        try #require(playing.elapsedSeconds >= 2, "\(playing); \(daemon.process.standardError.suffix(2000))")

        let downAt = ChildProcess.now()
        station.kill()
        let waiting = try daemon.wait(timeout: 60) { $0["waiting"] != nil }
        #expect(waiting["state"] == "play", "the state stays play while waiting: \(waiting)")
        #expect(["minimize-stalls", "evaluating-buffering-rate"].contains(waiting["waiting"] ?? ""), "\(waiting)")
        // No audio while waiting: the position holds. Nothing spins meanwhile (the tries back
        // off), and clients are answered.
        let held = try daemon.values("status").elapsedSeconds
        let (share, slowest) = try Self.idleWhileWaiting(daemon, label: "station down")
        #expect(share < 0.05, "the daemon used \(share * 100) % of a core while the station was down")
        #expect(slowest < 1, "status took \(slowest) s while the station was down")
        #expect(try daemon.values("status").elapsedSeconds == held, "elapsed does not move while waiting")

        try station.start()
        let upAt = ChildProcess.now()
        let resumed = try daemon.wait(timeout: 45) { $0["waiting"] == nil && $0.elapsedSeconds > held || $0["state"] != "play" }
        let resumedAt = ChildProcess.now()
        let bound = max(0.5, upAt - downAt) + 2
        print("station down \(String(format: "%.2f", upAt - downAt)) s; then \(resumed["state"] ?? "-") \(String(format: "%.2f", resumedAt - upAt)) s after it came back (bound \(String(format: "%.2f", bound)) s)")
        // A restarting icecast answers 404 for the mount until its source is back: for a live
        // station that played, that is a try that failed, not the end of the stream.
        #expect(resumed["waiting"] == nil && resumed.elapsedSeconds > held, "\(resumed); \(daemon.process.standardError.suffix(2000))")
        #expect(resumedAt - upAt <= bound, "resumed \(resumedAt - upAt) s after the station came back")
        #expect(daemon.cannotPlay.isEmpty, "\(daemon.cannotPlay)")
        daemon.stop()
    }

    /// A station that stays down past `--stream-retry-time`: the item fails with a clear
    /// `cannot play: URL: why` and the queue moves on to the next song.
    @Test func aStationDownPastTheRetryTimeFailsAndTheQueueMovesOn() throws {
        let station = try IcecastServer(streamName: "short-lived station")
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        _ = try TestMedia.makeTone(seconds: 30, in: music, name: "after")
        let daemon = try StreamDaemon(["--output", "null", "--no-state", "--stream-retry-time", "2"], music: music)
        try daemon.run("add \(station.url.absoluteString)")
        try daemon.run("add after.mp3")
        try daemon.run("play")
        try #require(try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 1 }.elapsedSeconds >= 1)
        let downAt = ChildProcess.now()
        station.kill()
        let after = try daemon.wait(timeout: 60) { $0["song"] == "1" && $0.elapsedSeconds > 0 }
        #expect(after["song"] == "1" && after["state"] == "play", "\(after); \(daemon.process.standardError.suffix(2000))")
        print("the stream failed and the next song played \(String(format: "%.2f", ChildProcess.now() - downAt)) s after the station went down")
        #expect(daemon.cannotPlay.contains { $0.contains("cannot play: \(station.url.absoluteString): ") }, "\(daemon.cannotPlay)")
        daemon.stop()
    }

    /// Nothing spins while a stream waits, and waiting blocks no client: a station that is down
    /// (connections refused, the tries backing off) and a server that accepts and never
    /// answers each keep the daemon near idle, under 5 % of one core over a window of
    /// 6 s (a thread spinning would take 100 %), while `status` is answered every 200 ms.
    @Test(arguments: ["refused", "silent"])
    func aWaitingStreamSpinsNothingAndBlocksNoClient(server kind: String) throws {
        let server = try ScriptedHTTPServer { _, connection in connection.pause(600) }
        defer { server.stop() }
        if kind == "refused" { server.stop() }
        let url = server.url("station").absoluteString
        let daemon = try StreamDaemon(["--output", "null", "--no-state", "--stream-retry-time", "300"])
        try daemon.run("add \(url)")
        try daemon.run("play")
        let waiting = try daemon.wait(timeout: 15) { $0["waiting"] != nil }
        try #require(waiting["state"] == "play" && waiting["waiting"] != nil, "\(waiting); \(daemon.process.standardError.suffix(2000))")
        if kind == "silent" {
            #expect(waitUntil(timeout: 10) { !server.requests.isEmpty }, "the daemon asked the silent server")
        }

        let (share, slowest) = try Self.idleWhileWaiting(daemon, label: "\(kind) server (\(server.requests.count) requests)")
        #expect(share < 0.05, "the daemon used \(share * 100) % of a core while waiting")
        #expect(slowest < 1, "status took \(slowest) s while the stream waited")
        #expect(daemon.cannotPlay.isEmpty, "\(daemon.cannotPlay)")
        daemon.stop()
    }

    /// Asks `status` every 200 ms for 6 s while `daemon` waits for a stream (each reply must
    /// say `play` and `waiting`); returns the share of one core the daemon used meanwhile
    /// (`/proc/PID/stat`) and the slowest reply, in seconds.
    static func idleWhileWaiting(_ daemon: StreamDaemon, label: String) throws -> (share: Double, slowest: Double) {
        let pid = daemon.process.processIdentifier
        let cpuBefore = try #require(ProcessStatistics.cpuSeconds(pid))
        let start = ChildProcess.now()
        var slowest = 0.0
        var answers = 0
        while ChildProcess.now() - start < 6 {
            let asked = ChildProcess.now()
            let status = try daemon.values("status")
            slowest = max(slowest, ChildProcess.now() - asked)
            #expect(status["state"] == "play" && status["waiting"] != nil, "\(status)")
            answers += 1
            var none = pollfd()
            _ = poll(&none, 0, 200)
        }
        let window = ChildProcess.now() - start
        let share = (try #require(ProcessStatistics.cpuSeconds(pid)) - cpuBefore) / window
        print("\(label): the waiting daemon used \(String(format: "%.2f", share * 100)) % of a core over \(String(format: "%.1f", window)) s; \(answers) status answered, slowest \(String(format: "%.0f", slowest * 1000)) ms")
        return (share, slowest)
    }
}

import Foundation
import TestSupport
import Testing

/// `idle` woken by the player itself: an item that ends on its own is a `player` event
/// (transcript 55), with no client sending anything meanwhile.
@Suite(.serialized) struct ControlSocketIdleTests {
    @Test func anItemEndingByItselfWakesIdlePlayer() throws {
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let itemSeconds = 2.0
        _ = try TestMedia.makeTone(seconds: itemSeconds, frequency: 440, in: music, name: "a-first")
        _ = try TestMedia.makeTone(seconds: itemSeconds, frequency: 660, in: music, name: "b-second")
        // `--media`: the daemon queues both and plays by itself; no client starts anything.
        let daemon = try InProcessDaemon { $0.media = music.path }
        defer { daemon.stop() }

        // Wait (through throw-away connections) until the first item plays, so that the
        // watcher below connects after every event of the start of playback.
        var playing: [String] = []
        let deadline = ChildProcess.now() + 3
        while ChildProcess.now() < deadline {
            let probe = try daemon.client()
            playing = try probe.request("status")
            probe.close()
            if replyValue(playing, "state") == "play", let elapsed = replyValue(playing, "elapsed").flatMap(Double.init), elapsed >= 0.3 { break }
            usleep(50_000)
        }
        try #require(replyValue(playing, "state") == "play" && replyValue(playing, "song") == "0", "status: \(playing)")

        let watcher = try daemon.client()
        let status = try watcher.request("status")
        let elapsed = try #require(replyValue(status, "elapsed").flatMap(Double.init), "status: \(status)")
        let duration = try #require(replyValue(status, "duration").flatMap(Double.init), "status: \(status)")
        #expect(abs(duration - itemSeconds) < 0.01, "status: \(status)")
        try #require(replyValue(status, "song") == "0", "status: \(status)")
        let remaining = duration - elapsed

        // `idle player` until the first item ends: `changed: player`, `OK`, within 3 s.
        try watcher.send("idle player\n")
        let idleSentAt = ChildProcess.now()
        let reply = try watcher.readReply(timeout: 3)
        let advancedAfter = ChildProcess.now() - idleSentAt
        #expect(reply == ["changed: player", "OK"])
        #expect(advancedAfter >= remaining - 0.3,
                "the reply came \(advancedAfter) s after idle, but the item had \(remaining) s left: not the item's end")
        #expect(advancedAfter <= remaining + 1.0, "the reply came \(advancedAfter) s after idle; the item had \(remaining) s left")
        let afterAdvance = try watcher.request("status")
        #expect(replyValue(afterAdvance, "state") == "play" && replyValue(afterAdvance, "song") == "1", "status: \(afterAdvance)")
        let advancedAt = ChildProcess.now()

        // `idle player` again until the end of the queue (mpd may first report the advance a
        // second time: it notifies `player` twice, transcript 55). At the end: stopped.
        var final: [String] = []
        var stoppedAfter: Double?
        for _ in 0..<3 {
            try watcher.send("idle player\n")
            let reply = try watcher.readReply(timeout: itemSeconds + 3)
            #expect(reply == ["changed: player", "OK"])
            final = try watcher.request("status")
            if replyValue(final, "state") == "stop" {
                stoppedAfter = ChildProcess.now() - advancedAt
                break
            }
            #expect(replyValue(final, "song") == "1", "status: \(final)")
        }
        let stopped = try #require(stoppedAfter, "never stopped: \(final)")
        #expect(stopped >= itemSeconds - 0.5 && stopped <= itemSeconds + 1.0, "the queue ended \(stopped) s after the advance")
        // mpd's status at the end of the queue: stopped, no current song (transcript 55); then the daemon's own
        // keys: the life cycle's and the pace's (no `silenceskipped` with no current item).
        #expect(replyPairs(final).map(\.key) == ["volume", "repeat", "random", "single", "consume", "partition", "playlist",
                                                  "playlistlength", "mixrampdb", "state", "appstate",
                                                  "rate", "pitchalgorithm", "skipsilence"], "status: \(final)")
        #expect(replyValue(final, "playlistlength") == "2", "status: \(final)")
        #expect(daemon.lines.map(\.text) == ["Now playing: a-first.mp3", "Now playing: b-second.mp3"])
    }

    /// `noidle` and the rules around idle that python-mpd2's asyncio client relies on
    /// (fact sheet §6, transcripts 35, 54).
    @Test func noidleAndCommandsDuringIdle() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        // Nothing pending: idle waits; noidle ends it with OK.
        try client.send("idle\n")
        #expect(client.receive(timeout: 0.3) == .timedOut, "idle with nothing pending must wait")
        #expect(try client.request("noidle") == ["OK"])
        // noidle while not idling: no reply at all; the connection goes on.
        try client.send("noidle\n")
        #expect(client.receive(timeout: 0.3) == .timedOut, "noidle outside idle must get no reply")
        #expect(try client.request("ping") == ["OK"])
        // Idle subsystem names are case-insensitive; unknown ones are an error.
        try client.send("idle PLAYER\n")
        #expect(client.receive(timeout: 0.2) == .timedOut)
        #expect(try client.request("noidle") == ["OK"])
        #expect(try client.request("idle bogus") == ["ACK [2@0] {idle} Unrecognized idle event: bogus"])
        // The client's own command is an event for it: add → `playlist` at once.
        #expect(try client.request("add \"01-morning-sine.mp3\"") == ["OK"])
        #expect(try client.request("idle") == ["changed: playlist", "OK"])
        // asyncio's chunk: `noidle` racing a reply already sent is ignored, the next command runs.
        try client.send("noidle\nping\n")
        #expect(try client.readReply() == ["OK"])
        #expect(client.receive(timeout: 0.3) == .timedOut, "the stray noidle must not be answered")
        // Any other command during idle: the connection is closed, with no reply.
        try client.send("idle\n")
        #expect(client.receive(timeout: 0.2) == .timedOut)
        try client.send("status\n")
        let end = client.waitForEndOfFile(timeout: 2)
        #expect(end.closed && end.received.isEmpty, "status during idle: \(String(decoding: end.received, as: UTF8.self).debugDescription)")
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// While stopped, the event loop answers `status` and `currentsong` with the replies the
/// controller rendered last (the daemon's status snapshot), so a client hammering them costs
/// no hop to the controller. Whatever way the state changes, no client may read a reply older
/// than a change it could know of: its own command, an idle notification (a signal:
/// IntegrationTests' suite of the same name).
@Suite(.serialized) struct ControlSocketStatusSnapshotTests {
    static let song = "01-morning-sine.mp3"

    /// One client, all in one write: every `status` and `currentsong` shows what the command
    /// before it did, round after round (each round starts with the replies kept).
    @Test func aClientsOwnCommandsShowInItsNextStatus() throws {
        let daemon = try InProcessDaemon {
            $0.musicDirectory = TestMedia.directory.path
            $0.noState = true
        }
        defer { daemon.stop() }
        let client = try daemon.client()
        typealias Check = ([String]) -> Bool
        func status(_ state: String, length: Int, song: Int? = nil) -> Check {
            { reply in
                replyValue(reply, "state") == state && replyValue(reply, "playlistlength") == String(length)
                    && replyValue(reply, "song") == song.map(String.init)
            }
        }
        let noSong: Check = { $0 == ["OK"] }
        let theSong: Check = { replyValue($0, "file") == Self.song && $0.last == "OK" }
        let ok: Check = { $0 == ["OK"] }
        let round: [(String, Check)] = [
            ("status", status("stop", length: 0)), ("status", status("stop", length: 0)), ("currentsong", noSong),
            ("add \(Self.song)", ok), ("status", status("stop", length: 1)), ("currentsong", noSong),
            ("play 0", ok), ("status", status("play", length: 1, song: 0)), ("currentsong", theSong),
            ("stop", ok), ("status", status("stop", length: 1, song: 0)), ("currentsong", theSong),
            ("status", status("stop", length: 1, song: 0)), ("currentsong", theSong),
            ("clear", ok), ("status", status("stop", length: 0)), ("currentsong", noSong),
        ]
        let rounds = 25
        let text = Array(repeating: round.map { $0.0 + "\n" }.joined(), count: rounds).joined()
        let sent = client.sendAvailable(Array(text.utf8), timeout: 10)
        try #require(sent.count == text.utf8.count, "sent \(sent.count) of \(text.utf8.count) bytes")
        for number in 0..<rounds {
            for (request, check) in round {
                let reply = try client.readReply(timeout: 10)
                try #require(check(reply), "round \(number), \(request): \(reply)")
            }
        }
    }

    /// Another client's change: once a client has heard of it (idle), its next `status`
    /// shows it, although the replies were kept a moment before.
    @Test func aChangeHeardOfThroughIdleShowsInTheNextStatus() throws {
        let daemon = try InProcessDaemon {
            $0.musicDirectory = TestMedia.directory.path
            $0.noState = true
        }
        defer { daemon.stop() }
        let watcher = try daemon.client()
        let changer = try daemon.client()
        for number in 0..<25 {
            let length = number % 2 == 0 ? 1 : 0
            // The watcher's replies are kept (twice: the second is answered from the snapshot).
            for _ in 0..<2 {
                let before = try watcher.request("status")
                try #require(replyValue(before, "playlistlength") == String(1 - length), "round \(number): \(before)")
            }
            try watcher.send("idle playlist\n")
            #expect(try changer.request(length == 1 ? "add \(Self.song)" : "clear") == ["OK"])
            #expect(try watcher.readReply() == ["changed: playlist", "OK"])
            let after = try watcher.request("status")
            try #require(replyValue(after, "playlistlength") == String(length), "round \(number): \(after)")
        }
    }

    /// While playing, `status` is answered from the kept reply with the audible time filled in
    /// on the event loop (the player works it out there): in a stream of `status` for 1.5 s the
    /// elapsed time never goes back and keeps pace with the wall clock, `time` agrees with it,
    /// and the other lines stay what the partition rendered. A pause shows in the next `status`
    /// (the player's state is part of the kept reply's conditions), and so does a seek.
    @Test func whilePlayingTheStatusShowsTheAudibleTime() throws {
        let daemon = try InProcessDaemon {
            $0.musicDirectory = TestMedia.directory.path
            $0.noState = true
        }
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("add \(Self.song)") == ["OK"])
        #expect(try client.request("play 0") == ["OK"])
        func elapsed(_ reply: [String]) -> Double? { replyValue(reply, "elapsed").flatMap(Double.init) }
        try #require(waitUntil(timeout: 10) { ((try? client.request("status")).flatMap(elapsed) ?? 0) > 0.2 },
                     "the song did not start playing")
        var samples: [(x: Double, y: Double)] = []
        var others: Set<[String]> = []
        let start = ChildProcess.now()
        while ChildProcess.now() - start < 1.5 {
            let reply = try client.request("status")
            let now = ChildProcess.now()
            let seconds = try #require(elapsed(reply), "\(reply)")
            let duration = try #require(replyValue(reply, "duration").flatMap(Double.init))
            // `time` is `elapsed` and `duration` in whole seconds, rounded from the unrounded time
            // (so within half a second and a millisecond of the three decimals `elapsed` shows).
            let time = try #require(replyValue(reply, "time")?.split(separator: ":").compactMap { Double($0) }, "\(reply)")
            #expect(time.count == 2 && abs(time[0] - seconds) <= 0.501 && time[1] == duration.rounded(), "\(reply)")
            if let last = samples.last { #expect(seconds >= last.y, "elapsed went back: \(last.y) then \(seconds)") }
            samples.append((x: now, y: seconds))
            others.insert(reply.filter { !$0.hasPrefix("time: ") && !$0.hasPrefix("elapsed: ") && !$0.hasPrefix("bitrate: ") })
        }
        try #require(samples.count >= 50, "only \(samples.count) replies in 1.5 s")
        let slope = try #require(Statistics.slope(samples))
        #expect(abs(slope - 1) <= 0.05, "elapsed against the wall clock has slope \(slope)")
        #expect(others.count == 1, "the other lines changed while playing: \(others)")

        #expect(try client.request("pause 1") == ["OK"])
        let paused = try client.request("status")
        #expect(replyValue(paused, "state") == "pause", "\(paused)")
        #expect(try client.request("seekcur 1") == ["OK"])
        #expect(try client.request("pause 0") == ["OK"])
        let sought = try client.request("status")
        #expect(replyValue(sought, "state") == "play", "\(sought)")
        let after = try #require(elapsed(sought))
        #expect(after >= 1 && after < 1.5, "after seeking to 1 s and playing on: \(sought)")
    }
}

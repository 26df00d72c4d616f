import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// While stopped, the event loop answers `status` and `currentsong` with the replies the
/// controller rendered last (the daemon's status snapshot), so a client hammering them costs
/// no hop to the controller. Whatever way the state changes, no client may read a reply older
/// than a change it could know of: its own command, an idle notification, a signal.
@Suite(.serialized) struct ControlSocketStatusSnapshotTests {
    static let song = "01-morning-sine.mp3"

    /// One client, all in one write: every `status` and `currentsong` shows what the command
    /// before it did, round after round (each round starts with the replies kept).
    @Test func aClientsOwnCommandsShowInItsNextStatus() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state"])
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
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state"])
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

    /// The application's state is in `status` (`appstate`): a signal that moves the daemon to
    /// the background shows in the first `status` after the daemon says it has moved.
    @Test func theBackgroundShowsInTheFirstStatusAfterTheMove() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state"])
        defer { daemon.stop() }
        let client = try daemon.client()
        for _ in 0..<2 { #expect(replyValue(try client.request("status"), "appstate") == "active") }
        daemon.process.send(SIGUSR1)
        #expect(waitUntil(timeout: 5) { daemon.process.standardError.contains("entered the background") },
                "stderr: \(daemon.process.standardError)")
        let status = try client.request("status")
        #expect(replyValue(status, "appstate") == "background", "\(status)")
        #expect(replyValue(status, "backgroundtimeremaining") != nil, "\(status)")
        daemon.process.send(SIGUSR2)
        #expect(waitUntil(timeout: 5) { replyValue((try? client.request("status")) ?? [], "appstate") == "active" })
    }
}

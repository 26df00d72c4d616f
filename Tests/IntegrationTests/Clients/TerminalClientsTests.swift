import Foundation
import TestSupport
import Testing

/// ncmpcpp and ncmpc as a person uses them, in a terminal: their screens open and fill with
/// what the daemon answers, their keys act on the daemon (checked with `status` and
/// `playlistinfo`), the daemon never answers them with an error, they never reconnect, and
/// no error ever shows on their status line. Keys are the clients' default bindings
/// (ncmpcpp's `/usr/share/doc/ncmpcpp/bindings`, ncmpc's `GlobalBindings.cxx`).
@Suite(.serialized) struct TerminalClientsTests {
    static let titles = ControlSocketExpectations.media.map(\.title)
    static let files = ControlSocketExpectations.media.map(\.file)

    /// ncmpcpp 0.9: 1 queue (`plchanges`), 2 browser (`lsinfo`), 3 search engine (`search`),
    /// 4 media library (`list`/`find`); Enter plays (`playid`), `p` pauses (`pause`), `f` seeks
    /// (`seek`), `>` next, `r` repeat, Delete deletes (`delete` in a command list).
    @Test func ncmpcpp() throws {
        // The private config only raises the connection timeout from 5 s, which a starved test
        // daemon on a loaded machine can exceed; a hang still fails the waits below.
        let run = try TerminalClientRun("/usr/bin/ncmpcpp", configFile: "ncmpcpp/config",
                                        configuration: "mpd_connection_timeout = 60\n",
                                        errorMarkers: ["MPD:", "ncmpcpp:", "unknown command", "ACK"])
        defer { run.close() }
        let titles = Self.titles

        run.waitForScreen("the queue's titles") { screen in titles.allSatisfy(screen.contains) }
        try Self.playPauseSeekNextRepeatDelete(run, keys: PlayerKeys(
            pause: "p", delete: "Delete", playingLabel: "Playing:", pausedLabel: "Paused:",
            seekCommand: #/seek "1" "(\d+)"/#))
        run.waitForScreen("the queue without the deleted song") { $0.contains("Playlist (3 items") && !$0.contains(titles[1]) }

        try run.terminal.send("2")
        run.waitForScreen("the browser's songs") { screen in screen.contains("Browse: /") && titles.allSatisfy(screen.contains) }
        run.waitForCommand(#/lsinfo ""/#)

        try run.terminal.send("4")
        run.waitForScreen("the media library's artist, album and songs") { screen in
            screen.contains("Media library") && screen.contains(ControlSocketExpectations.artist)
                && screen.contains(ControlSocketExpectations.album) && screen.contains(titles[0])
        }
        run.waitForCommand(#/list Artist/#)

        // Search engine: Enter edits "Any", the phrase, Enter; y searches; Enter plays the one found.
        try run.terminal.send("3")
        run.waitForScreen("the search engine") { $0.contains("Search engine") && $0.contains("Any") }
        try run.terminal.send("Enter")
        try run.terminal.send("morning", literal: true)
        try run.terminal.send("Enter", "y")
        run.waitForScreen("one song found") { $0.contains("Found 1 song") && $0.contains(titles[0]) }
        run.waitForCommand(#/search any "morning"/#)
        try Self.playTheFirstSongFound(run, queueKey: "1")
    }

    /// ncmpc 0.47: 2 queue (`playlistinfo`), 3 browser (`lsinfo`), 4 library (`list`/`find`),
    /// 5 search (5 again for a new search: `search`); Enter plays (`playid`), `P` pauses
    /// (`pause 1`), `f` seeks (`seekid`), `>` next, `r` repeat, `d` deletes (`deleteid`).
    @Test func ncmpc() throws {
        // The private config only raises the timeout after which ncmpc reconnects from 5 s (see ncmpcpp's).
        let run = try TerminalClientRun("/usr/bin/ncmpc", configFile: "ncmpc/config", configuration: "timeout = 60\n",
                                        errorMarkers: ["unknown command", "ACK", "rror", "Timeout", "closed"])
        defer { run.close() }
        let titles = Self.titles

        run.waitForScreen("the queue's titles") { screen in screen.contains("2:Queue") && titles.allSatisfy(screen.contains) }
        try Self.playPauseSeekNextRepeatDelete(run, keys: PlayerKeys(
            pause: "P", delete: "d", playingLabel: "Playing:", pausedLabel: "[Paused]",
            seekCommand: #/seekid "\d+" "(\d+)"/#))
        run.waitForCommand(#/deleteid "\d+"/#)
        run.waitForScreen("the queue without the deleted song") { screen in
            [0, 2, 3].allSatisfy { screen.contains(titles[$0]) } && !screen.contains(titles[1])
        }

        try run.terminal.send("3")
        run.waitForScreen("the browser's songs") { screen in screen.contains("3:Browse:") && titles.allSatisfy(screen.contains) }
        run.waitForCommand(#/lsinfo ""/#)

        // The library lists artists; Enter skips the album level (one album) to the songs.
        try run.terminal.send("4")
        run.waitForScreen("the library's artists") { $0.contains("4:Artists") && $0.contains("[\(ControlSocketExpectations.artist)]") }
        run.waitForCommand(#/list Artist/#)
        try run.terminal.send("Enter")
        run.waitForScreen("the artist's songs") { screen in
            screen.contains("4:Songs: \(ControlSocketExpectations.artist)") && titles.allSatisfy(screen.contains)
        }
        run.waitForCommand(#/find Artist "queueplayerd project"/#)

        // 5 opens the search page, 5 again asks for the phrase (title search); Enter plays the one found.
        try run.terminal.send("5")
        run.waitForScreen("the search page") { $0.contains("New search") }
        try run.terminal.send("5")
        run.waitForStatusLine("the search prompt") { $0.hasPrefix("Search") }
        try run.terminal.send("morning", literal: true)
        try run.terminal.send("Enter")
        run.waitForScreen("the song found") { $0.contains("Search 'morning'") && $0.contains(titles[0]) }
        run.waitForCommand(#/search Title "morning"/#)
        try Self.playTheFirstSongFound(run, queueKey: "2")
    }

    // MARK: - What both clients share

    /// Enter on the search's result (the first song) plays it; back on the queue (`queueKey`)
    /// the status line shows it; then the whole conversation's checks and the daemon's idling.
    static func playTheFirstSongFound(_ run: TerminalClientRun, queueKey: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        try run.terminal.send("Enter")
        try run.waitForStatus("the song found playing", command: "currentsong", sourceLocation: sourceLocation) { $0["file"] == files[0] }
        try run.waitForStatus("the song found playing", sourceLocation: sourceLocation) { $0["state"] == "play" }
        try run.terminal.send(queueKey)
        run.waitForStatusLine("the song found playing", sourceLocation: sourceLocation) { $0.hasPrefix("Playing:") && $0.contains(titles[0]) }
        run.expectCleanConversation(sourceLocation: sourceLocation)
        try run.expectDaemonIdles(sourceLocation: sourceLocation)
    }

    /// What differs between the clients in ``playPauseSeekNextRepeatDelete(_:keys:)``.
    struct PlayerKeys {
        var pause: String
        var delete: String
        /// The status line's beginning while playing, and while paused.
        var playingLabel: String
        var pausedLabel: String
        /// The client's seek request; its capture is the target in whole seconds.
        var seekCommand: Regex<(Substring, Substring)>
    }

    /// On the queue (cursor on its first row): Down, Enter plays the second song (20 s); pause;
    /// `f` four times seeks (paused, so the daemon's `elapsed` is the target exactly); pause
    /// again plays on; `>` plays the third song; `r` turns repeat on; delete removes the
    /// second song, where the cursor still is, while the third plays on.
    static func playPauseSeekNextRepeatDelete(_ run: TerminalClientRun, keys: PlayerKeys,
                                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        try run.terminal.send("Down", "Enter")
        let playing = try run.waitForStatus("the second song playing", sourceLocation: sourceLocation) { $0["song"] == "1" && $0["state"] == "play" }
        run.waitForStatusLine("the second song playing", sourceLocation: sourceLocation) { $0.hasPrefix(keys.playingLabel) && $0.contains(titles[1]) }

        try run.terminal.send(keys.pause)
        let paused = try run.waitForStatus("pause", sourceLocation: sourceLocation) { $0["state"] == "pause" }
        run.waitForStatusLine("pause", sourceLocation: sourceLocation) { $0.hasPrefix(keys.pausedLabel) }

        // Four presses: 4 s on (or more: both clients seek faster while the key is held).
        let before = Double(paused["elapsed"] ?? "") ?? 0
        try run.terminal.send("f", "f", "f", "f")
        let target = run.waitForCommand(keys.seekCommand, sourceLocation: sourceLocation).flatMap { Int($0.1) } ?? -1
        #expect(target >= Int(before) + 3, "seek target \(target) s from \(before) s", sourceLocation: sourceLocation)
        let sought = try run.waitForStatus("elapsed at the seek target", sourceLocation: sourceLocation) {
            abs((Double($0["elapsed"] ?? "") ?? -1) - Double(target)) < 0.1
        }
        #expect(sought["state"] == "pause" && sought["songid"] == playing["songid"], "\(sought)", sourceLocation: sourceLocation)
        run.waitForStatusLine("the seek target", sourceLocation: sourceLocation) { $0.contains(String(format: "[0:%02d/0:20]", target)) }

        try run.terminal.send(keys.pause)
        try run.waitForStatus("play again", sourceLocation: sourceLocation) { $0["state"] == "play" }

        try run.terminal.send(">")
        try run.waitForStatus("the next song", sourceLocation: sourceLocation) { $0["song"] == "2" && $0["state"] == "play" }
        run.waitForStatusLine("the next song playing", sourceLocation: sourceLocation) { $0.hasPrefix(keys.playingLabel) && $0.contains(titles[2]) }

        try run.terminal.send("r")
        try run.waitForStatus("repeat on", sourceLocation: sourceLocation) { $0["repeat"] == "1" }
        run.waitForScreen("repeat's indicator", sourceLocation: sourceLocation) { $0.contains("[r]") }

        let third = try run.values("status")["songid"]
        try run.terminal.send(keys.delete)
        try run.waitForStatus("the second song deleted", sourceLocation: sourceLocation) { $0["playlistlength"] == "3" }
        #expect(try run.queueFiles() == [files[0], files[2], files[3]], sourceLocation: sourceLocation)
        let afterDelete = try run.values("status")
        #expect(afterDelete["songid"] == third && afterDelete["song"] == "1" && afterDelete["state"] == "play",
                "\(afterDelete)", sourceLocation: sourceLocation)
    }
}

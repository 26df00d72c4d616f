import Foundation
import TestSupport
import Testing

/// The desktop's view of the daemon: mpDris2 (the MPRIS bridge for MPD) on a private session
/// bus, and `playerctl` driving it as a user does: status, metadata, play-pause, next, previous,
/// position, loop, shuffle and volume. Every action is checked on both sides: in playerctl's
/// output and in the daemon's `status`. mpDris2 talks to the daemon through a ``RecordingProxy``,
/// so each test also checks which MPD commands the actions became, that the daemon answered
/// none of them with ACK and that mpDris2 never reconnected (which is how it hides an ACK).
@Suite(.serialized) struct MPRISClientsTests {
    typealias Media = ControlSocketExpectations

    /// A daemon over Media/ with its four songs queued and stopped, and mpDris2 serving it on
    /// a private bus. `body` acts and returns the command lines mpDris2 must have sent; then
    /// the conversation must hold them, no ACK and a single connection, and mpDris2 must still
    /// run and have logged no error or warning.
    static func withPlayer(sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: (ControlDaemon, MPRISSession) throws -> [String]) throws {
        let daemon = try MPDClientsTests.daemonWithDatabase()
        defer { daemon.stop() }
        expectSuccess(try daemon.mpc("add", "/"), stdout: [])
        let proxy = try RecordingProxy(to: daemon.socket, in: daemon.directory)
        defer { proxy.stop() }
        let player = try MPRISSession(server: proxy.socket, musicDirectory: TestMedia.directory, in: daemon.directory)
        defer { player.stop() }
        try #require(try player.waitUntilListed(), "playerctl -l never listed mpd; mpDris2: \(player.log)",
                     sourceLocation: sourceLocation)

        let expected = try body(daemon, player)

        #expect(player.process.isRunning, "mpDris2's session ended: \(player.log)", sourceLocation: sourceLocation)
        let transcript = proxy.transcript
        #expect(transcript.errors.isEmpty, "the daemon refused mpDris2: \(transcript)", sourceLocation: sourceLocation)
        #expect(transcript.connections == 1, "mpDris2 reconnected: \(transcript)", sourceLocation: sourceLocation)
        #expect(player.problems.isEmpty, "mpDris2 complained: \(player.problems)", sourceLocation: sourceLocation)
        let commands = transcript.commands
        for command in expected {
            #expect(commands.contains(command), "mpDris2 never sent \(command): \(commands)", sourceLocation: sourceLocation)
        }
    }

    /// `playerctl -p mpd ARGUMENTS` succeeds (once mpDris2 has caught up) and prints `expected`.
    static func expectPlayer(_ player: MPRISSession, _ arguments: String..., shows expected: String,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try player.waitForPlayer(arguments) { $0 == expected }
        #expect(run.status == 0 && MPRISSession.output(run) == expected, "expected \(expected.debugDescription): \(run)",
                sourceLocation: sourceLocation)
    }

    /// `playerctl -p mpd ARGUMENTS`, a command, succeeds silently.
    static func act(_ player: MPRISSession, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try player.playerctl(["-p", "mpd"] + arguments)
        #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.isEmpty, "\(run)", sourceLocation: sourceLocation)
    }

    /// The daemon's `status` once `condition` holds (or after 20 s), as a dictionary.
    static func status(_ daemon: ControlDaemon, until condition: ([String: String]) -> Bool) throws -> [String: String] {
        valueMap(replyPairs(try daemon.waitForStatus(timeout: 20) { condition(valueMap(replyPairs($0))) }))
    }

    /// The proxy on which every test's "no ACK, no reconnection" rests: it records a client's
    /// connection, its commands and the daemon's refusal of one.
    @Test func theProxyRecordsCommandsAndRefusals() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        let proxy = try RecordingProxy(to: daemon.socket, in: daemon.directory)
        defer { proxy.stop() }
        let client = try UnixSocketClient(path: proxy.socket)
        #expect(try client.readLine(timeout: 5)?.hasPrefix("OK MPD ") == true)
        #expect(try client.request("ping") == ["OK"])
        let refusal = try client.request("seekid \"1\" \"x\"")
        #expect(refusal.count == 1 && refusal[0].hasPrefix("ACK "), "\(refusal)")
        client.close()
        let deadline = ChildProcess.now() + 10
        while proxy.transcript.errors.isEmpty && ChildProcess.now() < deadline { usleep(20_000) }
        let transcript = proxy.transcript
        #expect(transcript.connections == 1 && transcript.commands == ["ping", "seekid \"1\" \"x\""], "\(transcript)")
        #expect(transcript.errors == refusal, "\(transcript)")
    }

    @Test func statusPlayPauseNextPreviousStopAndMetadata() throws {
        try Self.withPlayer { daemon, player in
            try Self.expectPlayer(player, "status", shows: "Stopped")

            try Self.act(player, "play-pause")
            let playing = try Self.status(daemon) { $0["state"] == "play" }
            #expect(playing["state"] == "play" && playing["song"] == "0", "\(playing)")
            try Self.expectPlayer(player, "status", shows: "Playing")

            // The metadata is the daemon's current song, as MPRIS names it.
            let song = valueMap(replyPairs(try daemon.client().request("currentsong")))
            let id = try #require(song["Id"], "\(song)")
            #expect(song["Title"] == Media.media[0].title && song["Time"] == "\(Media.media[0].seconds)", "\(song)")
            let format = "{{mpris:trackid}}|{{xesam:title}}|{{xesam:artist}}|{{xesam:album}}|{{mpris:length}}|{{xesam:url}}"
            // (playerctl prints an object path as GVariant text, quoted.)
            let metadata = ["'/org/mpris/MediaPlayer2/Track/\(id)'", Media.media[0].title, Media.artist, Media.album,
                            "\(Media.media[0].seconds * 1_000_000)",
                            "file://" + TestMedia.directory.appendingPathComponent(Media.media[0].file).path]
            try Self.expectPlayer(player, "metadata", "--format", format, shows: metadata.joined(separator: "|"))

            try Self.act(player, "next")
            let next = try Self.status(daemon) { $0["song"] == "1" }
            #expect(next["song"] == "1" && next["state"] == "play", "\(next)")
            try Self.expectPlayer(player, "metadata", "title", shows: Media.media[1].title)

            try Self.act(player, "previous")
            let previous = try Self.status(daemon) { $0["song"] == "0" }
            #expect(previous["song"] == "0" && previous["state"] == "play", "\(previous)")
            try Self.expectPlayer(player, "metadata", "title", shows: Media.media[0].title)

            try Self.act(player, "play-pause")
            #expect(try Self.status(daemon) { $0["state"] == "pause" }["state"] == "pause")
            try Self.expectPlayer(player, "status", shows: "Paused")

            try Self.act(player, "stop")
            #expect(try Self.status(daemon) { $0["state"] == "stop" }["state"] == "stop")
            try Self.expectPlayer(player, "status", shows: "Stopped")
            return ["play", "next", "previous", "pause \"1\"", "stop"]
        }
    }

    /// MPRIS positions are microseconds; mpDris2 reads whole seconds from `time:` and seeks
    /// with `seekid ID SECONDS` (a fraction: "3.0").
    @Test func positionReadsAndSeeks() throws {
        try Self.withPlayer { daemon, player in
            try Self.act(player, "play")
            _ = try Self.status(daemon) { $0["state"] == "play" }
            try Self.act(player, "pause")
            let paused = try Self.status(daemon) { $0["state"] == "pause" }
            let id = try #require(paused["songid"], "\(paused)")

            // Paused, the position stands still: both sides show exactly where it went.
            for (argument, seconds) in [("3", 3), ("5+", 8), ("30-", 0)] {
                try Self.act(player, "position", argument)
                let status = try Self.status(daemon) { $0["elapsed"] == "\(seconds).000" }
                #expect(status["elapsed"] == "\(seconds).000" && status["state"] == "pause" && status["songid"] == id,
                        "position \(argument): \(status)")
                let run = try player.waitForPlayer(["position"]) { Double($0).map { abs($0 - Double(seconds)) < 0.001 } ?? false }
                #expect(Double(MPRISSession.output(run)).map { abs($0 - Double(seconds)) < 0.001 } == true,
                        "position after \(argument): \(run)")
            }

            // Playing, it goes on from where it was sent, by no more than the time that has passed.
            try Self.act(player, "play")
            let start = ChildProcess.now()
            try Self.act(player, "position", "10")
            let status = try Self.status(daemon) { Double($0["elapsed"] ?? "") ?? 0 >= 10 }
            let read = try player.waitForPlayer(["position"]) { Double($0) ?? 0 >= 10 }
            let bound = 10 + (ChildProcess.now() - start)
            let daemonElapsed = try #require(Double(status["elapsed"] ?? ""), "\(status)")
            let shown = try #require(Double(MPRISSession.output(read)), "\(read)")
            #expect(status["state"] == "play" && (10...bound).contains(daemonElapsed), "bound \(bound): \(status)")
            #expect((10...bound).contains(shown), "position \(shown), bound \(bound)")
            return ["pause \"1\"", "seekid \"\(id)\" \"3.0\"", "seekid \"\(id)\" \"8.0\"", "seekid \"\(id)\" \"0\"",
                    "seekid \"\(id)\" \"10.0\""]
        }
    }

    /// MPRIS's LoopStatus is MPD's repeat and single: None (0, 0), Track (1, 1), Playlist (1, 0);
    /// Shuffle is random. A change made by another client shows too (idle `options`).
    @Test func loopAndShuffle() throws {
        try Self.withPlayer { daemon, player in
            try Self.expectPlayer(player, "loop", shows: "None")
            let modes: [(loop: String, repeat: String, single: String)] = [("Track", "1", "1"), ("Playlist", "1", "0"),
                                                                          ("None", "0", "0")]
            for mode in modes {
                try Self.act(player, "loop", mode.loop)
                let status = try Self.status(daemon) { $0["repeat"] == mode.repeat && $0["single"] == mode.single }
                #expect(status["repeat"] == mode.repeat && status["single"] == mode.single, "loop \(mode.loop): \(status)")
                try Self.expectPlayer(player, "loop", shows: mode.loop)
            }

            try Self.act(player, "shuffle", "On")
            #expect(try Self.status(daemon) { $0["random"] == "1" }["random"] == "1")
            try Self.expectPlayer(player, "shuffle", shows: "On")
            try Self.act(player, "shuffle", "Off")
            #expect(try Self.status(daemon) { $0["random"] == "0" }["random"] == "0")
            try Self.expectPlayer(player, "shuffle", shows: "Off")

            expectSuccess(try daemon.mpc("-q", "repeat", "on"), stdout: [])
            try Self.expectPlayer(player, "loop", shows: "Playlist")
            return ["repeat \"1\"", "single \"1\"", "single \"0\"", "repeat \"0\"", "random \"1\"", "random \"0\""]
        }
    }

    /// MPRIS's Volume (0...1) is MPD's volume (0...100): read from `status`, set with `setvol`;
    /// a change made by another client shows too (idle `mixer`).
    @Test func volume() throws {
        try Self.withPlayer { daemon, player in
            try Self.expectPlayer(player, "volume", shows: "1.000000")
            for (level, percent) in [("0.5", "50"), ("0.25", "25")] {
                try Self.act(player, "volume", level)
                #expect(try Self.status(daemon) { $0["volume"] == percent }["volume"] == percent, "volume \(level)")
                try Self.expectPlayer(player, "volume", shows: level.padding(toLength: 8, withPad: "0", startingAt: 0))
            }
            expectSuccess(try daemon.mpc("-q", "volume", "30"), stdout: [])
            try Self.expectPlayer(player, "volume", shows: "0.300000")
            return ["setvol \"50\"", "setvol \"25\""]
        }
    }
}

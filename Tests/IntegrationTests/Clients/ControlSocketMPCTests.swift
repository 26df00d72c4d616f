import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `mpc` 0.34 against the daemon's control socket. Each invocation must print what it
/// prints with mpd 0.23 for `Media/`'s four items,
/// exit as it does there, and never print a `warning:`.
@Suite(.serialized) struct ControlSocketMPCTests {
    typealias Expect = ControlSocketExpectations

    @Test func mpcSessionGivesMPDsOutputs() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        let volume = Expect.volumeLine
        let morning = Expect.songLines[0]
        let evening = Expect.songLines[1]

        // Nothing queued, stopped (transcripts 01, 20c): only the options line; `current` prints nothing.
        expectSuccess(try daemon.mpc(), stdout: [volume])
        expectSuccess(try daemon.mpc("status"), stdout: [volume])
        expectSuccess(try daemon.mpc("current"), stdout: [])
        expectSuccess(try daemon.mpc("playlist"), stdout: [])

        // `mpc add /` (transcript 03): `config`, then `add ""`; prints nothing.
        expectSuccess(try daemon.mpc("add", "/"), stdout: [])
        // `mpc playlist` (04): `Artist - Title` per queued item, in name order.
        expectSuccess(try daemon.mpc("playlist"), stdout: Expect.songLines)
        // Stopped with a queue (19, 19b): still only the options line, `current` nothing.
        expectSuccess(try daemon.mpc(), stdout: [volume])
        expectSuccess(try daemon.mpc("current"), stdout: [])

        // `mpc play` (05): the first item from its start.
        expectPlayingStatus(try daemon.mpc("play"), song: morning, state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 0...1)
        try daemon.waitForElapsed(atLeast: 1.2)
        // `mpc` (06) while playing: the time goes on.
        expectPlayingStatus(try daemon.mpc(), song: morning, state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 1...2)
        // `mpc current` (07).
        expectSuccess(try daemon.mpc("current"), stdout: [morning])

        // `mpc pause` (08): `[paused]` and two spaces; the time stands still while paused (09).
        let pausedAt = expectPlayingStatus(try daemon.mpc("pause"), song: morning, state: "paused",
                                           position: 1, length: 4, total: 18, elapsed: 1...2)
        // Paused, `elapsed` stays exactly where it is for longer than a second of playing.
        let pausedElapsed = replyValue(try daemon.waitForStatus { _ in true }, "elapsed")
        let pausedSince = ChildProcess.now()
        let moved = try daemon.waitForStatus(timeout: 1.1) { replyValue($0, "elapsed") != pausedElapsed }
        #expect(replyValue(moved, "elapsed") == pausedElapsed && ChildProcess.now() - pausedSince >= 1.1,
                "paused at \(pausedElapsed ?? "?"), then \(moved)")
        if let pausedAt {
            expectPlayingStatus(try daemon.mpc(), song: morning, state: "paused",
                                position: 1, length: 4, total: 18, elapsed: pausedAt...pausedAt)
        }
        expectSuccess(try daemon.mpc("current"), stdout: [morning])   // 09b

        // `mpc toggle` (10): `status`, then `play`; it resumes where it paused.
        if let pausedAt {
            expectPlayingStatus(try daemon.mpc("toggle"), song: morning, state: "playing",
                                position: 1, length: 4, total: 18, elapsed: pausedAt...(pausedAt + 1))
        }

        // `mpc next` (11), `mpc prev` (12): the other item, from its start.
        expectPlayingStatus(try daemon.mpc("next"), song: evening, state: "playing",
                            position: 2, length: 4, total: 20, elapsed: 0...1)
        expectPlayingStatus(try daemon.mpc("prev"), song: morning, state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 0...1)

        // `mpc seek 5` (13): `seekcur "5"`.
        expectPlayingStatus(try daemon.mpc("seek", "5"), song: morning, state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 5...6)

        // `mpc playlist` while playing: the same four lines.
        expectSuccess(try daemon.mpc("playlist"), stdout: Expect.songLines)

        // `mpc play 99` (30): `play "98"` → `ACK [2@0] {play} Bad song index`.
        let bad = try daemon.mpc("play", "99")
        #expect(bad.status == 1, "\(bad)")
        #expect(bad.stdout == [], "\(bad)")
        #expect(bad.stderr == "MPD error: Bad song index\n", "\(bad)")
        // ... and playback went on untouched.
        expectPlayingStatus(try daemon.mpc(), song: morning, state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 5...6)

        // `mpc idle` (21) waits; another mpc's `next` wakes it with `player`, and it exits 0.
        let idle = try startIdlingMPC(daemon)
        defer { idle.terminate() }
        #expect(idle.isRunning, "mpc idle returned before anything changed: \(idle.lines.map(\.text)) \(idle.standardError)")
        let nextAt = ChildProcess.now()
        expectPlayingStatus(try daemon.mpc("next"), song: evening, state: "playing",
                            position: 2, length: 4, total: 20, elapsed: 0...1)
        let idleRun = ToolRun.finish(idle, command: "mpc idle", timeout: 3)
        expectSuccess(idleRun, stdout: ["player"])
        #expect(ChildProcess.now() - nextAt < 1.0, "mpc idle ended \(ChildProcess.now() - nextAt) s after mpc next was started")

        // `mpc idle` while another mpc clears the queue during playback: `playlist` and `player`
        // in one reply (§6: "clear while playing → playlist + player in one reply").
        let idleForClear = try startIdlingMPC(daemon)
        defer { idleForClear.terminate() }
        #expect(idleForClear.isRunning, "mpc idle returned before anything changed: \(idleForClear.lines.map(\.text))")
        // `mpc clear` (20): stopped, empty: only the options line.
        expectSuccess(try daemon.mpc("clear"), stdout: [volume])
        expectSuccess(ToolRun.finish(idleForClear, command: "mpc idle", timeout: 3), stdout: ["playlist", "player"])

        // Empty again: `playlist` (20b) and `current` (20c) print nothing; `play` does nothing (20d).
        expectSuccess(try daemon.mpc("playlist"), stdout: [])
        expectSuccess(try daemon.mpc("current"), stdout: [])
        expectSuccess(try daemon.mpc("play"), stdout: [volume])
        // `mpc play 99` on an empty queue is the same error.
        let badEmpty = try daemon.mpc("play", "99")
        #expect(badEmpty.status == 1 && badEmpty.stdout == [] && badEmpty.stderr == "MPD error: Bad song index\n", "\(badEmpty)")

        #expect(daemon.process.isRunning, "stderr: \(daemon.process.standardError)")
    }

    /// In the background, `mpc next` moves the `Background:` lines on to the next item, counted
    /// from its start (they used to stop until it had played as long as the previous item had).
    @Test func backgroundLinesGoOnFromTheStartOfTheItemMPCNextMovesTo() throws {
        let daemon = try ControlDaemon(["--media", TestMedia.directory.path])
        defer { daemon.stop() }
        let first = "Now playing: \(Expect.media[0].file)", second = "Now playing: \(Expect.media[1].file)"
        try #require(daemon.process.waitForLine(timeout: 5) { $0 == first } != nil)
        try daemon.waitForElapsed(atLeast: 1.0)
        daemon.process.send(SIGUSR1)
        try #require(daemon.process.waitForLine(timeout: 2) { $0.hasPrefix("Background: 1.") } != nil)
        _ = try daemon.mpc("next")
        let moved = try #require(daemon.process.waitForLine(timeout: 2) { $0 == second })
        func linesAfterNext() -> [ChildProcess.Line] {
            daemon.process.lines.filter { $0.time > moved.time && $0.text.hasPrefix("Background: ") }
        }
        let deadline = ChildProcess.now() + 5
        while linesAfterNext().count < 40 && ChildProcess.now() < deadline {
            var none = pollfd()
            _ = poll(&none, 0, 10)
        }
        let after = Array(linesAfterNext().prefix(40))
        let values = after.compactMap { Double($0.text.dropFirst("Background: ".count)) }
        #expect((values.first ?? 1) <= 0.01, "the first line after `next`: \(after.first?.text ?? "none")")
        #expect(values.count == 40 && after[after.count - 1].time - moved.time <= 0.6,
                "\(values.count) lines, the 40th \(after.last.map { $0.time - moved.time } ?? -1) s after `next` (at most 0.6 s)")
        #expect(values.allSatisfy { $0 < 1 }, "every line after `next` counts from the next item's start: \(values.prefix(5))")
    }

    /// Errors mpc reports for a stopped player (24, 24b, 31) and for `add` (39).
    @Test func mpcErrorsWhenStoppedAndForMissingFiles() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        expectSuccess(try daemon.mpc("add", "/"), stdout: [])
        for (arguments, message) in [(["next"], "MPD error: Not playing\n"),
                                     (["prev"], "MPD error: Not playing\n"),
                                     (["seek", "10"], "MPD error: Not playing\n"),
                                     (["add", "nosuch.mp3"], "error adding nosuch.mp3: No such directory\n")] {
            let run = try ToolRun.run("/usr/bin/mpc", arguments, environment: ["MPD_HOST": daemon.socket], timeout: 10)
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout == [], "\(run)")
            #expect(run.stderr == message, "\(run)")
        }
        // `mpc pause` while stopped is no error (24c); `mpc toggle` starts playing (24d).
        expectSuccess(try daemon.mpc("pause"), stdout: [Expect.volumeLine])
        expectPlayingStatus(try daemon.mpc("toggle"), song: Expect.songLines[0], state: "playing",
                            position: 1, length: 4, total: 18, elapsed: 0...1)
        // `mpc add 02-evening-triangle.mp3` (02) queues it a second time, at the end.
        expectSuccess(try daemon.mpc("add", Expect.media[1].file), stdout: [])
        expectSuccess(try daemon.mpc("playlist"), stdout: Expect.songLines + [Expect.songLines[1]])
    }
}

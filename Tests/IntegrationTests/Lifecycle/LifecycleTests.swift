import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's application life cycle, seen from outside: signals, background
/// modes, background tasks, suspension on the real alsa-lib path, and waking.
@Suite(.serialized) struct LifecycleTests {
    static let toBackground = ["WillResignActive(inactive)", "DidEnterBackground(background)"]
    static let toForeground = ["WillEnterForeground(background)", "DidBecomeActive(active)"]

    @Test func signalsAndBurstsPostTheNotificationsInIOSOrderAndEndInTheLastSignalsState() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state"])
        #expect(try daemon.status()["appstate"] == "active")
        #expect(try daemon.status()["backgroundtimeremaining"] == nil, "no background time is reported in the foreground")

        daemon.process.send(SIGUSR1)
        var status = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "background" }
        #expect(status["appstate"] == "background")
        let remaining = try #require(status["backgroundtimeremaining"].flatMap(Double.init))
        #expect(remaining > 170 && remaining <= 180, "backgroundtimeremaining: \(remaining)")
        daemon.process.send(SIGUSR2)
        status = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }
        #expect(status["appstate"] == "active")
        #expect(daemon.notifications(endingWith: Self.toForeground) == Self.toBackground + Self.toForeground)

        // A burst, each signal sent once the previous one has been taken (no longer pending): the
        // daemon follows every one. (Signals pending together: SignalOrderTests.)
        for signal in [SIGUSR1, SIGUSR2, SIGUSR1, SIGUSR2, SIGUSR1] {
            daemon.process.send(signal)
            try #require(SignalOrderTests.waitUntilNoSignalPending(daemon.process.processIdentifier))
        }
        let afterFirst = Array(daemon.notifications(endingWith: Self.toBackground).dropFirst(4))
        #expect(afterFirst == Self.toBackground + Self.toForeground + Self.toBackground + Self.toForeground + Self.toBackground)
        #expect(try daemon.status()["appstate"] == "background")
        // A repeated signal changes nothing: after it, USR2 adds just the way back.
        daemon.process.send(SIGUSR1)
        try #require(SignalOrderTests.waitUntilNoSignalPending(daemon.process.processIdentifier))
        daemon.process.send(SIGUSR2)
        #expect(daemon.notifications(endingWith: Self.toForeground).count == 16)
        #expect(try daemon.status()["state"] == "play", "the audio background mode keeps playing")
    }

    @Test func backgroundModeNonePausesOnBackgroundAndStaysPausedOnReturn() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state",
                                          "--background-modes", "none"])
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        daemon.process.send(SIGUSR1)
        // The paused position is first the control queue's estimate, then the render thread's
        // own report of where it stopped (a millisecond or so later, once seen in a loaded run):
        // take it once two readings 10 ms apart agree.
        var previous: String?
        let paused = try daemon.waitForStatus(timeout: 2) { status in
            defer { previous = status["elapsed"] }
            return status["state"] == "pause" && status["elapsed"] != nil && status["elapsed"] == previous
        }
        #expect(paused["state"] == "pause" && paused["appstate"] == "background")
        let elapsed = try #require(paused["elapsed"].flatMap(Double.init))
        daemon.process.send(SIGUSR2)
        let back = try daemon.waitForStatus(timeout: 1) { $0["appstate"] == "active" }
        #expect(!daemon.process.lines.contains { $0.text.hasPrefix("Background:") }, "nothing played, so nothing ticked")
        #expect(back["state"] == "pause", "an app without the audio mode stays paused on return")
        #expect(back["elapsed"].flatMap(Double.init) == elapsed)
    }

    /// `--background-time 0`: the allowance is spent the moment the daemon is backgrounded,
    /// while an `update` (a background task) is still reading tags.
    @Test func expiredBackgroundTimeEndsTasksThenSuspensionClosesTheALSADeviceAndPlayWakesIt() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let (library, song) = try makeLargeLibrary()
        defer { try? FileManager.default.removeItem(at: library) }
        let daemon = try LifecycleDaemon(["--output", "alsa:pulsenull", "--no-state", "--background-time", "0", song.path],
                                         environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        #expect(waitUntil(timeout: 5) { (try? pulse.playbackStreamCount()) == 1 }, "playing holds the device")

        try daemon.request("pause")
        #expect(try pulse.playbackStreamCount() == 1, "a paused daemon in the foreground keeps the device")
        #expect(try daemon.request("update")["updating_db"] == "1")
        daemon.process.send(SIGUSR1)
        let suspended = try daemon.waitForStatus(timeout: 5) { $0["appstate"] == "suspended" }
        #expect(suspended["appstate"] == "suspended", "stderr: \(daemon.process.standardError)")
        #expect(suspended["backgroundtimeremaining"] == "0.000")
        #expect(daemon.waitForStandardError { $0.contains("stopped early: the background time ran out") },
                "the update task's expiration handler ran: \(daemon.process.standardError)")
        #expect(!daemon.process.standardError.contains("was still running"), "its handler ended it in time")
        #expect(daemon.notifications(endingWith: ["DidSuspend(suspended)"]).suffix(3) == Self.toBackground + ["DidSuspend(suspended)"])
        #expect(waitUntil(timeout: 5) { (try? pulse.playbackStreamCount()) == 0 }, "suspension closed the ALSA device")

        // Suspended, nothing polls: once the work that led here has died down, every thread but
        // libdispatch's manager (its one-second pool monitor, `IdleWakeUpTests` says why) stays asleep.
        let suspendedWakeUps = try WakeUps.settledWindow(of: daemon.process.processIdentifier)
        print("suspended: \(suspendedWakeUps)")
        #expect(suspendedWakeUps.isAsleep, "suspended: \(suspendedWakeUps)")
        #expect(!daemon.process.lines.contains { $0.text.hasPrefix("Background:") })

        // A remote play command wakes the daemon into the background, and audio resumes.
        let elapsed = try #require(suspended["elapsed"].flatMap(Double.init))
        let wokenAt = ChildProcess.now()
        try daemon.request("play")
        let woken = try daemon.status()
        #expect(woken["appstate"] == "background" && woken["state"] == "play")
        let firstTick = daemon.process.waitForLine(timeout: 2) { $0.hasPrefix("Background: ") }
        #expect(firstTick.map { $0.time - wokenAt } ?? 9 < 0.5, "ticks resume in the background")
        #expect(waitUntil(timeout: 5) { (try? pulse.playbackStreamCount()) == 1 }, "playing reopened the device")
        // Played on in real time from where it was: elapsed moves as the wall clock does.
        let (wallBefore, playedBefore) = (ChildProcess.now(), try #require(try daemon.status()["elapsed"].flatMap(Double.init)))
        // Where it was: the paused time was read from the device's last report, so the frame the
        // player reloads from may lie a few milliseconds before it (never more than a chunk, 23 ms).
        #expect(playedBefore >= elapsed - 0.025 && playedBefore - elapsed < 0.5, "resumed at \(playedBefore), was at \(elapsed)")
        // The rate is measured once the reopened device runs (its start-up may hold the
        // position for a moment and then let it catch up), over a second of playing.
        let settled = try daemon.waitForStatus(timeout: 5) { ($0["elapsed"].flatMap(Double.init) ?? 0) >= playedBefore + 0.3 }
        let (wallSettled, playedSettled) = (ChildProcess.now(), try #require(settled["elapsed"].flatMap(Double.init)))
        let resumed = try daemon.waitForStatus(timeout: 5) { ($0["elapsed"].flatMap(Double.init) ?? 0) >= playedSettled + 1 }
        let playedAfter = try #require(resumed["elapsed"].flatMap(Double.init))
        let wall = ChildProcess.now() - wallSettled
        let rate = (playedAfter - playedSettled) / wall
        #expect(rate > 0.8 && rate <= 1.1, "played \(playedAfter - playedSettled) s in \(wall) s (resumed at \(wallBefore))")

        // Pausing with the time already spent suspends at once: the ticks stop, none for a
        // playing time after the pause.
        try daemon.request("pause")
        let pausedAgain = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "suspended" }
        try #require(pausedAgain["appstate"] == "suspended")
        let pausedAt = try #require(pausedAgain["elapsed"].flatMap(Double.init))
        #expect(waitUntil(timeout: 5) { (try? pulse.playbackStreamCount()) == 0 }, "suspension closed the device again")
        let late = daemon.process.lines.compactMap { line -> Double? in
            guard line.text.hasPrefix("Background: ") else { return nil }
            return Double(line.text.dropFirst("Background: ".count)).flatMap { $0 > pausedAt + 0.011 ? $0 : nil }
        }
        #expect(late.isEmpty, "ticks for playing times after the pause at \(pausedAt): \(late)")

        daemon.process.send(SIGUSR2)
        #expect(try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }["state"] == "pause")
        #expect(daemon.notifications(endingWith: Self.toForeground).suffix(3) == ["DidWake(background)"] + Self.toForeground)
    }
}

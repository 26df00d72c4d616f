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

        // A burst: signals 2 ms apart (standard signals pending at the same moment are
        // delivered lowest number first by the kernel, so closer than that their order is lost).
        for signal in [SIGUSR1, SIGUSR2, SIGUSR1, SIGUSR2, SIGUSR1] {
            daemon.process.send(signal)
            usleep(2_000)
        }
        status = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "background" }
        usleep(100_000)
        #expect(try daemon.status()["appstate"] == "background")
        let afterFirst = Array(daemon.notifications(endingWith: Self.toBackground).dropFirst(4))
        #expect(afterFirst == Self.toBackground + Self.toForeground + Self.toBackground + Self.toForeground + Self.toBackground)
        // A repeated signal changes nothing.
        daemon.process.send(SIGUSR1)
        usleep(100_000)
        #expect(daemon.notifications.count == 14)
        #expect(try daemon.status()["state"] == "play", "the audio background mode keeps playing")
    }

    @Test func backgroundModeNonePausesOnBackgroundAndStaysPausedOnReturn() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state",
                                          "--background-modes", "none"])
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        daemon.process.send(SIGUSR1)
        let paused = try daemon.waitForStatus(timeout: 1) { $0["state"] == "pause" }
        #expect(paused["state"] == "pause" && paused["appstate"] == "background")
        let elapsed = try #require(paused["elapsed"].flatMap(Double.init))
        usleep(300_000)
        #expect(!daemon.process.lines.contains { $0.text.hasPrefix("Background:") }, "nothing plays, so nothing ticks")
        daemon.process.send(SIGUSR2)
        let back = try daemon.waitForStatus(timeout: 1) { $0["appstate"] == "active" }
        #expect(back["state"] == "pause", "an app without the audio mode stays paused on return")
        #expect(back["elapsed"].flatMap(Double.init) == elapsed)
    }

    /// `--background-time 0`: the allowance is spent the moment the daemon is backgrounded,
    /// while an `update` (a background task) is still reading tags.
    @Test func expiredBackgroundTimeEndsTasksThenSuspensionClosesTheALSADeviceAndPlayWakesIt() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let library = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: library) }
        let song = library.appendingPathComponent("song.mp3")
        try FileManager.default.copyItem(at: TestMedia.all[0], to: song)
        // Enough files that reading their tags outlasts the signal's round trip many times over.
        let copies = library.appendingPathComponent("copies")
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
        for index in 0..<2_000 {
            try FileManager.default.linkItem(at: song, to: copies.appendingPathComponent(String(format: "copy-%04d.mp3", index)))
        }
        let daemon = try LifecycleDaemon(["--output", "alsa:pulsenull", "--no-state", "--background-time", "0", song.path],
                                         environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        usleep(300_000)
        #expect(try pulse.playbackStreamCount() == 1, "playing holds the device")

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
        usleep(200_000)
        #expect(try pulse.playbackStreamCount() == 0, "suspension closed the ALSA device")

        // Suspended, nothing polls: no thread of the daemon wakes up in a second.
        let before = daemon.contextSwitches
        usleep(1_000_000)
        let switches = daemon.contextSwitches - before
        #expect(switches <= 2, "\(switches) context switches in a second of suspension")
        #expect(!daemon.process.lines.contains { $0.text.hasPrefix("Background:") })

        // A remote play command wakes the daemon into the background, and audio resumes.
        let elapsed = try #require(suspended["elapsed"].flatMap(Double.init))
        let wokenAt = ChildProcess.now()
        try daemon.request("play")
        let woken = try daemon.status()
        #expect(woken["appstate"] == "background" && woken["state"] == "play")
        let firstTick = daemon.process.waitForLine(timeout: 2) { $0.hasPrefix("Background: ") }
        #expect(firstTick.map { $0.time - wokenAt } ?? 9 < 0.2, "ticks resume in the background")
        usleep(500_000)
        #expect(try pulse.playbackStreamCount() == 1, "playing reopened the device")
        let later = try #require(try daemon.status()["elapsed"].flatMap(Double.init))
        #expect(later - elapsed > 0.4 && later - elapsed < 0.8, "played on from \(elapsed) to \(later)")

        // Pausing with the time already spent suspends at once: the ticks stop.
        let pausedAt = ChildProcess.now()
        try daemon.request("pause")
        try #require(try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "suspended" }["appstate"] == "suspended")
        usleep(300_000)
        let lastTick = try #require(daemon.process.lines.last { $0.text.hasPrefix("Background: ") })
        #expect(lastTick.time - pausedAt < 0.05, "a tick came \(lastTick.time - pausedAt) s after the pause")
        #expect(try pulse.playbackStreamCount() == 0)

        daemon.process.send(SIGUSR2)
        #expect(try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }["state"] == "pause")
        #expect(daemon.notifications(endingWith: Self.toForeground).suffix(3) == ["DidWake(background)"] + Self.toForeground)
    }
}

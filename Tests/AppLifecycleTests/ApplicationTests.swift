import AppLifecycle
import Dispatch
import Foundation
import QueuePlayer
import Synchronization
import TestSupport
import Testing

/// The life-cycle state machine against a virtual clock, with a private notification center.
@Suite struct ApplicationTests {
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    struct Fixture {
        let application: Application
        let clock: VirtualClock
        let log: Log
        let center: NotificationCenter
        let tokens: [any NSObjectProtocol]

        init(mode: Application.BackgroundMode = .audio, backgroundTime: Double = 180, playing: Bool = false) {
            clock = VirtualClock()
            center = NotificationCenter()
            let queue = DispatchQueue(label: "application")
            application = Application(backgroundMode: mode, backgroundTime: backgroundTime, clock: clock,
                                      queue: queue, notificationCenter: center)
            application.isPlayingAudio = { playing }
            let log = Log()
            let center = self.center
            let names: [(Notification.Name, String)] = [
                (Application.willResignActiveNotification, "willResignActive"),
                (Application.didEnterBackgroundNotification, "didEnterBackground"),
                (Application.willEnterForegroundNotification, "willEnterForeground"),
                (Application.didBecomeActiveNotification, "didBecomeActive"),
                (Application.didSuspendNotification, "didSuspend"),
                (Application.didWakeNotification, "didWake"),
            ]
            self.log = log
            tokens = names.map { name, label in
                center.addObserver(forName: name, object: nil, queue: nil) { note in
                    let state = (note.object as? Application)?.state.rawValue ?? "?"
                    log.append("\(label):\(state)")
                }
            }
        }

        func onQueue<T>(_ body: (Application) -> T) -> T { application.queue.sync { body(application) } }

        /// Moves the clock, then lets the application's queue run what the clock handed it.
        func advance(bySeconds seconds: Double) {
            clock.advance(bySeconds: seconds)
            application.queue.sync {}
        }
    }

    @Test func signalsPostTheNotificationsInIOSOrder() {
        let fixture = Fixture()
        #expect(fixture.onQueue(\.state) == .active)
        fixture.onQueue { $0.enterBackground() }
        #expect(fixture.log.all == ["willResignActive:inactive", "didEnterBackground:background"])
        fixture.onQueue { $0.enterForeground() }
        #expect(fixture.log.all == ["willResignActive:inactive", "didEnterBackground:background",
                                    "willEnterForeground:background", "didBecomeActive:active"])
        #expect(fixture.onQueue(\.state) == .active)
    }

    @Test func aBurstEndsInTheStateOfTheLastSignal() {
        let fixture = Fixture()
        fixture.onQueue { app in
            app.enterBackground()
            app.enterBackground()   // repeated: nothing more happens
            app.enterForeground()
            app.enterBackground()
        }
        #expect(fixture.onQueue(\.state) == .background)
        #expect(fixture.log.all.filter { $0.hasPrefix("didEnterBackground") }.count == 2)
        fixture.onQueue { $0.enterForeground(); $0.enterForeground() }
        #expect(fixture.onQueue(\.state) == .active)
        #expect(fixture.log.all.last == "didBecomeActive:active")
    }

    @Test func backgroundTimeCountsDownOnlyInTheBackground() {
        let fixture = Fixture(backgroundTime: 10)
        #expect(fixture.onQueue(\.backgroundTimeRemaining) == .infinity)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 4)
        #expect(abs(fixture.onQueue(\.backgroundTimeRemaining) - 6) < 1e-6)
        fixture.onQueue { $0.enterForeground() }
        #expect(fixture.onQueue(\.backgroundTimeRemaining) == .infinity)
    }

    @Test func expirationHandlersRunWhenTheTimeIsSpentThenTheDaemonSuspends() {
        let fixture = Fixture(backgroundTime: 5)
        let expired = Log()
        let overran = Log()
        fixture.application.taskOverran = { overran.append($0) }
        let identifiers = Mutex<[BackgroundTaskIdentifier]>([])
        let application = fixture.application
        let (save, forgotten) = fixture.onQueue { app in
            (app.beginBackgroundTask(name: "save state") { expired.append("save state") },
             app.beginBackgroundTask(name: "forgotten") { expired.append("forgotten") })
        }
        // A well-behaved task ends itself in its expiration handler: it is not reported.
        fixture.onQueue { app in
            identifiers.withLock { $0.append(app.beginBackgroundTask(name: "update") {
                expired.append("update")
                application.endBackgroundTask(identifiers.withLock { $0[0] })
            }) }
        }
        // The handler of "save state" would normally end it; here only one of the two ends in time.
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 4.9)
        #expect(expired.all.isEmpty)
        #expect(fixture.onQueue(\.state) == .background)
        fixture.onQueue { $0.endBackgroundTask(save) }
        fixture.advance(bySeconds: 0.2)
        #expect(expired.all == ["forgotten", "update"])
        #expect(overran.all == ["forgotten"], "a task not ended by its expiration handler is reported by name")
        #expect(fixture.onQueue(\.state) == .suspended)
        #expect(fixture.log.all.last == "didSuspend:suspended")
        fixture.onQueue { $0.endBackgroundTask(forgotten); $0.endBackgroundTask(.invalid) }   // harmless
    }

    @Test func playingAudioKeepsAnAudioModeDaemonAwake() {
        let playing = Mutex(true)
        let fixture = Fixture(mode: .audio, backgroundTime: 1)
        fixture.application.isPlayingAudio = { playing.withLock { $0 } }
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 5)
        #expect(fixture.onQueue(\.state) == .background)
        playing.withLock { $0 = false }
        fixture.onQueue { $0.audioActivityChanged() }
        #expect(fixture.onQueue(\.state) == .suspended)
        // A remote command wakes it, with a fresh allowance; SIGUSR2 brings it to the foreground.
        fixture.onQueue { $0.wake() }
        #expect(fixture.onQueue(\.state) == .background)
        #expect(abs(fixture.onQueue(\.backgroundTimeRemaining) - 1) < 1e-6)
        fixture.advance(bySeconds: 2)
        #expect(fixture.onQueue(\.state) == .suspended)
        fixture.onQueue { $0.enterForeground() }
        #expect(fixture.onQueue(\.state) == .active)
        #expect(Array(fixture.log.all.suffix(3)) == ["didWake:background", "willEnterForeground:background", "didBecomeActive:active"])
    }

    /// As on iOS with the `location` background mode: standard location updates keep a
    /// backgrounded app running past its background time, with or without audio; once they stop
    /// (or only significant changes are watched), it is suspended.
    @Test func standardLocationUpdatesKeepItAwakeUntilTheyStop() {
        let updating = Mutex(true)
        let fixture = Fixture(mode: .none, backgroundTime: 1)
        fixture.application.isUpdatingLocationInBackground = { updating.withLock { $0 } }
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 5)
        #expect(fixture.onQueue(\.state) == .background)
        updating.withLock { $0 = false }
        fixture.onQueue { $0.audioActivityChanged() }
        #expect(fixture.onQueue(\.state) == .suspended)
    }

    @Test func withoutTheAudioModePlayingDoesNotKeepItAwake() {
        let fixture = Fixture(mode: .none, backgroundTime: 1, playing: true)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 1.5)
        #expect(fixture.onQueue(\.state) == .suspended)
    }

    @Test func aRunningTaskDelaysSuspensionUntilItEnds() {
        let fixture = Fixture(backgroundTime: 1)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 0.5)
        let task = fixture.onQueue { $0.beginBackgroundTask(name: "update") }
        #expect(fixture.onQueue(\.runningTaskNames) == ["update"])
        fixture.onQueue { $0.endBackgroundTask(task) }
        fixture.advance(bySeconds: 0.6)
        #expect(fixture.onQueue(\.state) == .suspended)
    }

    // MARK: - Background fetch

    @Test func aFetchWakesASuspendedDaemonOnlyUntilItsTaskEnds() {
        let fixture = Fixture(backgroundTime: 180)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 181)
        #expect(fixture.onQueue(\.state) == .suspended)
        let task = fixture.onQueue { $0.beginBackgroundFetchTask(name: "fetch", allowance: 35) }
        #expect(fixture.onQueue(\.state) == .background)
        #expect(fixture.log.all.last == "didWake:background")
        #expect(abs(fixture.onQueue(\.backgroundTimeRemaining) - 35) < 1e-6, "the fetch's allowance, not the background time")
        fixture.advance(bySeconds: 1)
        #expect(fixture.onQueue(\.state) == .background, "the running fetch keeps it awake")
        fixture.onQueue { $0.endBackgroundTask(task) }
        #expect(fixture.onQueue(\.state) == .suspended, "suspended again the moment the fetch ends, not 34 s later")
        #expect(Array(fixture.log.all.suffix(2)) == ["didWake:background", "didSuspend:suspended"])
    }

    @Test func aFetchThatOutrunsItsAllowanceExpiresAndTheDaemonSuspends() {
        let fixture = Fixture(backgroundTime: 0)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 0.1)
        #expect(fixture.onQueue(\.state) == .suspended)
        let expired = Log()
        let application = fixture.application
        let identifier = Mutex(BackgroundTaskIdentifier.invalid)
        fixture.onQueue { app in
            identifier.withLock {
                $0 = app.beginBackgroundFetchTask(name: "fetch", allowance: 30) {
                    expired.append("fetch")
                    application.endBackgroundTask(identifier.withLock { $0 })
                }
            }
        }
        fixture.advance(bySeconds: 29.9)
        #expect(expired.all.isEmpty && fixture.onQueue(\.state) == .background)
        fixture.advance(bySeconds: 0.2)
        #expect(expired.all == ["fetch"])
        #expect(fixture.onQueue(\.state) == .suspended)
    }

    @Test func aFetchInTheBackgroundGetsItsAllowanceAndACommandDuringAFetchWakeGetsTheFullOne() {
        let fixture = Fixture(backgroundTime: 10)
        fixture.onQueue { $0.enterBackground() }
        fixture.advance(bySeconds: 9)
        let task = fixture.onQueue { $0.beginBackgroundFetchTask(name: "fetch", allowance: 5) }
        #expect(abs(fixture.onQueue(\.backgroundTimeRemaining) - 5) < 1e-6, "raised from 1 s to the fetch's 5 s")
        fixture.onQueue { $0.endBackgroundTask(task) }
        #expect(fixture.onQueue(\.state) == .background, "not woken for the fetch: it keeps the rest of its allowance")
        fixture.advance(bySeconds: 6)
        #expect(fixture.onQueue(\.state) == .suspended)

        // Woken for a fetch, then a command: the daemon stays awake for a whole background time.
        let second = fixture.onQueue { $0.beginBackgroundFetchTask(name: "fetch", allowance: 5) }
        fixture.onQueue { $0.wake() }
        #expect(abs(fixture.onQueue(\.backgroundTimeRemaining) - 10) < 1e-6)
        fixture.onQueue { $0.endBackgroundTask(second) }
        #expect(fixture.onQueue(\.state) == .background)
        fixture.advance(bySeconds: 10.1)
        #expect(fixture.onQueue(\.state) == .suspended)
    }

    @Test func aFetchInTheForegroundChangesNoState() {
        let fixture = Fixture(backgroundTime: 1)
        let task = fixture.onQueue { $0.beginBackgroundFetchTask(name: "fetch", allowance: 30) }
        #expect(fixture.onQueue(\.state) == .active)
        #expect(fixture.onQueue(\.backgroundTimeRemaining) == .infinity)
        fixture.onQueue { $0.endBackgroundTask(task) }
        #expect(fixture.onQueue(\.state) == .active && fixture.log.all.isEmpty)
    }
}

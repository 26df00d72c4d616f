import AppLifecycle
import Dispatch
import FeedFetch
import Foundation
import Logging
import QueuePlayer
import Synchronization

/// Connects the daemon's ``Application`` to its player: what entering the
/// background, coming back, suspending and waking do to playback and output.
///
/// Lives on the partition's queue, as the application does; the periodic time
/// observer reads ``isInBackground`` from its own queue, and the feed fetcher begins its
/// tasks through ``beginBackgroundFetch(named:allowance:expirationHandler:)``, which hops there.
/// `@unchecked Sendable`: `observers` and `transport` belong to the application's queue (the
/// partition's), which ``start()`` asserts; the rest is `let`s and an atomic.
package final class LifecycleCoordinator: ApplicationContext, BackgroundFetchHost, @unchecked Sendable {
    package let application: Application
    private let player: QueuePlayer
    private let logger: Logger
    private let inBackground = Atomic<Bool>(false)
    private var observers: [any NSObjectProtocol] = []
    private var transport: Observation?

    /// True while the daemon is in the `background` state (and prints `Background:` lines).
    package var isInBackground: Bool { inBackground.load(ordering: .relaxed) }

    package init(application: Application, player: QueuePlayer, logger: Logger) {
        self.application = application
        self.player = player
        self.logger = logger
    }

    /// Starts following the application's notifications and the player's transport.
    package func start() {
        dispatchPrecondition(condition: .onQueue(application.queue))
        let application = application
        let player = player
        let logger = logger
        // Audio actually playing: a queue that ran out keeps its rate but plays nothing.
        application.isPlayingAudio = { player.timeControlStatus == .playing }
        application.taskOverran = { name in
            logger.error("background task \"\(name)\" was still running when the background time ran out")
        }
        let center = application.notificationCenter
        // Each notification, in the order posted, for whoever follows the daemon at debug level.
        for name in [Application.willResignActiveNotification, Application.didEnterBackgroundNotification,
                     Application.willEnterForegroundNotification, Application.didBecomeActiveNotification,
                     Application.didSuspendNotification, Application.didWakeNotification] {
            observers.append(center.addObserver(forName: name, object: application, queue: nil) { note in
                let state = (note.object as? Application)?.state.rawValue ?? "?"
                logger.debug("notification \(note.name.rawValue) (state \(state))")
            })
        }
        func on(_ name: Notification.Name, _ body: @escaping @Sendable (Application) -> Void) {
            observers.append(center.addObserver(forName: name, object: application, queue: nil) { note in
                if let application = note.object as? Application { body(application) }
            })
        }
        on(Application.willResignActiveNotification) { application in
            // As an iOS app without the audio background mode does, pause before leaving the foreground.
            if application.backgroundMode == .none && player.rate != 0 {
                player.pause()
                logger.info("paused: the background mode is none")
            }
        }
        on(Application.didEnterBackgroundNotification) { [self] application in
            inBackground.store(true, ordering: .relaxed)
            logger.info("entered the background (background time \(Self.format(application.backgroundTime)) s)")
        }
        on(Application.willEnterForegroundNotification) { [self] _ in
            inBackground.store(false, ordering: .relaxed)
        }
        on(Application.didBecomeActiveNotification) { _ in
            logger.info("entered the foreground")
        }
        on(Application.didSuspendNotification) { [self] _ in
            inBackground.store(false, ordering: .relaxed)
            // Only a daemon without the audio background mode, or one whose queue ran out, has a rate here.
            player.pause()
            player.releaseOutput()
            logger.info("suspended: the audio device is closed until a control command or SIGUSR2")
        }
        on(Application.didWakeNotification) { [self] application in
            inBackground.store(application.state == .background, ordering: .relaxed)
            logger.info("woken from suspension")
        }
        transport = player.observe(\.timeControlStatus, options: [.new]) { _, _ in
            application.queue.async { application.audioActivityChanged() }
        }
    }

    /// `SIGUSR1`.
    package func enterBackground() { application.enterBackground() }

    /// `SIGUSR2`.
    package func enterForeground() { application.enterForeground() }

    // MARK: - ApplicationContext

    package func commandNeedsPlayer() { application.wake() }

    package func beginBackgroundActivity(named name: String) -> BackgroundActivity {
        activity { application, expirationHandler in
            application.beginBackgroundTask(name: name, expirationHandler: expirationHandler)
        }
    }

    /// A background task begun by `begin` (on the application's queue), as an activity: its
    /// expiration handler marks it expired (then `onExpiry` runs) and ends the task.
    private func activity(onExpiry: @escaping @Sendable () -> Void = {},
                          _ begin: (Application, @escaping @Sendable () -> Void) -> BackgroundTaskIdentifier) -> BackgroundActivity {
        let application = application
        let identifier = Mutex(BackgroundTaskIdentifier.invalid)
        let activity = BackgroundActivity {
            application.queue.async { application.endBackgroundTask(identifier.withLock { $0 }) }
        }
        identifier.withLock {
            $0 = begin(application) {
                // Ended here, synchronously, as UIKit asks of an expiration handler; the work stops at
                // its next check. Also when the work has just ended on its own: its `end()` hops to this
                // queue and may not have run yet (ending twice does nothing).
                if activity.expire() { onExpiry() }
                application.endBackgroundTask(identifier.withLock { $0 })
            }
        }
        return activity
    }

    // MARK: - BackgroundFetchHost

    /// A fetch's task, begun on the application's queue: a suspended daemon wakes into the
    /// background for it (``Application/beginBackgroundFetchTask(name:allowance:expirationHandler:)``).
    package func beginBackgroundFetch(named name: String, allowance: Double,
                              expirationHandler: @escaping @Sendable () -> Void) async -> any BackgroundFetchTask {
        await withCheckedContinuation { (begun: CheckedContinuation<BackgroundActivity, Never>) in
            application.queue.async { [self] in
                begun.resume(returning: beginBackgroundWake(named: name, allowance: allowance, onExpiry: expirationHandler))
            }
        }
    }

    /// On the application's queue: a task that wakes a suspended daemon into the background
    /// for at most `allowance` seconds and lets it suspend again once no task runs (a fetch,
    /// or handling a finished download as iOS's `handleEventsForBackgroundURLSession` does).
    package func beginBackgroundWake(named name: String, allowance: Double, onExpiry: @escaping @Sendable () -> Void = {}) -> BackgroundActivity {
        activity(onExpiry: onExpiry) { application, handler in
            application.beginBackgroundFetchTask(name: name, allowance: allowance, expirationHandler: handler)
        }
    }

    /// The `status` lines of the life cycle: `appstate`, and `backgroundtimeremaining` while backgrounded.
    package var statusFields: [(String, String)] {
        var fields = [("appstate", application.state.rawValue)]
        let remaining = application.backgroundTimeRemaining
        if remaining.isFinite { fields.append(("backgroundtimeremaining", Self.format(remaining))) }
        return fields
    }

    package var statusFieldsAreSteady: Bool { application.backgroundTimeRemaining.isInfinite }

    private static func format(_ seconds: Double) -> String { String(format: "%.3f", seconds) }
}

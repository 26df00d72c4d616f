import Dispatch
import Foundation
import QueuePlayer

/// The daemon's application object: its life-cycle state, the notifications
/// that announce changes of it, background tasks and suspension, as UIKit's
/// `UIApplication` has them for an iOS app.
///
/// Every method must be called on ``queue``; notifications are posted there,
/// synchronously, in iOS's order.
public final class Application: @unchecked Sendable {
    /// Posted when the daemon is about to leave the foreground (state becomes `inactive`).
    public static let willResignActiveNotification = Notification.Name("ApplicationWillResignActive")
    /// Posted when the daemon is in the background (state `background`).
    public static let didEnterBackgroundNotification = Notification.Name("ApplicationDidEnterBackground")
    /// Posted when the daemon is about to come to the foreground.
    public static let willEnterForegroundNotification = Notification.Name("ApplicationWillEnterForeground")
    /// Posted when the daemon is in the foreground again (state `active`).
    public static let didBecomeActiveNotification = Notification.Name("ApplicationDidBecomeActive")
    /// Posted when the background time is spent and nothing keeps the daemon awake (state `suspended`).
    public static let didSuspendNotification = Notification.Name("ApplicationDidSuspend")
    /// Posted when a suspended daemon is woken into the background (a remote command).
    public static let didWakeNotification = Notification.Name("ApplicationDidWake")

    /// What keeps a backgrounded daemon running, as `UIBackgroundModes` does for an app.
    public enum BackgroundMode: String, Sendable, CaseIterable {
        /// Audio plays on in the background.
        case audio
        /// Nothing: entering the background pauses audio.
        case none
    }

    /// The queue the application lives on.
    public let queue: DispatchQueue
    /// The background mode, fixed at launch.
    public let backgroundMode: BackgroundMode
    /// How long the daemon may run in the background without playing audio, in seconds.
    public let backgroundTime: Double
    /// Where the life-cycle notifications are posted.
    public let notificationCenter: NotificationCenter
    /// Tells whether audio is playing (audio keeps a daemon with the `audio` mode awake).
    public var isPlayingAudio: @Sendable () -> Bool = { false }
    /// Whether standard location updates run with the `location` background mode: as on iOS,
    /// an app receiving them in the background is not suspended (the significant-change service
    /// and region monitoring do not keep it running: they wake it). Set by the daemon.
    public var isUpdatingLocationInBackground: @Sendable () -> Bool = { false }
    /// Called with the name of a task still running after its expiration handler ran.
    public var taskOverran: @Sendable (String) -> Void = { _ in }

    private let clock: any PlaybackClock
    private let timerQueue = DispatchQueue(label: "application.timer")
    private var expiryPeriod = 0
    private var tasks: [BackgroundTaskIdentifier: BackgroundTask] = [:]
    private var nextTaskID = 1
    private var backgroundSince: UInt64?
    private var expiry: (any ScheduledWork)?
    private var timeExpired = false
    private var isExpiring = false
    /// The background allowance of the current period: ``backgroundTime``, or a fetch's
    /// allowance after ``beginBackgroundFetchTask(name:allowance:expirationHandler:)``.
    private var periodAllowance: Double
    /// Woken from suspension for a background fetch only: suspended again as soon as no task
    /// runs, as iOS suspends an app once it has called a fetch's completion handler.
    private var wokenForFetch = false

    /// The current state. Starts `active`.
    public private(set) var state: ApplicationState = .active

    /// Creates the application object; `clock` times the background allowance.
    public init(backgroundMode: BackgroundMode = .audio, backgroundTime: Double = 180,
                clock: any PlaybackClock = RealTimeClock.shared, queue: DispatchQueue,
                notificationCenter: NotificationCenter = .default) {
        self.backgroundMode = backgroundMode
        self.backgroundTime = backgroundTime
        periodAllowance = backgroundTime
        self.clock = clock
        self.queue = queue
        self.notificationCenter = notificationCenter
    }

    // MARK: - Transitions

    /// `SIGUSR1`: will-resign-active (`inactive`), then did-enter-background (`background`).
    public func enterBackground() {
        guard state == .active || state == .inactive else { return }
        set(.inactive, posting: Self.willResignActiveNotification)
        startBackgroundPeriod(allowance: backgroundTime, forFetch: false, posting: Self.didEnterBackgroundNotification)
    }

    /// `SIGUSR2`: will-enter-foreground, then did-become-active (`active`).
    public func enterForeground() {
        guard state == .background || state == .suspended else { return }
        if state == .suspended { set(.background, posting: Self.didWakeNotification) }
        expiry?.cancel()
        expiry = nil
        backgroundSince = nil
        periodAllowance = backgroundTime
        wokenForFetch = false
        timeExpired = false
        notificationCenter.post(name: Self.willEnterForegroundNotification, object: self)
        set(.inactive, posting: nil)
        set(.active, posting: Self.didBecomeActiveNotification)
    }

    /// A remote command that needs the player: a suspended daemon wakes into the background,
    /// with a fresh background allowance. One woken only for a fetch gets the whole allowance
    /// too, and is no longer suspended the moment the fetch ends.
    public func wake() {
        guard state == .suspended || wokenForFetch else { return }
        startBackgroundPeriod(allowance: backgroundTime, forFetch: false,
                              posting: state == .suspended ? Self.didWakeNotification : nil)
    }

    /// Starts a background fetch's task, as iOS launches or wakes an app for
    /// `application(_:performFetchWithCompletionHandler:)`: the fetch runs in every state.
    ///
    /// - Suspended: the daemon wakes into the background (`didWake`) for at most `allowance`
    ///   seconds, and is suspended again as soon as no task runs (not at the end of a full
    ///   background allowance: a fetch every hour must not keep the daemon awake for minutes).
    /// - In the background with less than `allowance` left: the allowance is raised to it,
    ///   so the fetch is not cut short by time the daemon had already spent.
    /// - Otherwise (foreground, or background time already spent while audio plays): the
    ///   task alone keeps the daemon awake.
    ///
    /// End the task with ``endBackgroundTask(_:)``; `expirationHandler` runs if the allowance
    /// runs out first.
    public func beginBackgroundFetchTask(name: String, allowance: Double,
                                         expirationHandler: (@Sendable () -> Void)? = nil) -> BackgroundTaskIdentifier {
        if state == .suspended {
            startBackgroundPeriod(allowance: allowance, forFetch: true, posting: Self.didWakeNotification)
        } else if state == .background && !timeExpired && backgroundTimeRemaining < allowance {
            backgroundSince = clock.now()
            periodAllowance = allowance
            scheduleExpiry()
        }
        return beginBackgroundTask(name: name, expirationHandler: expirationHandler)
    }

    /// Call when what keeps the app running changed (audio started or stopped, location updates
    /// switched): past its background time, an app that nothing keeps running is suspended.
    public func audioActivityChanged() {
        suspendIfIdle()
    }

    // MARK: - Background time and tasks

    /// Seconds the daemon may still run in the background; infinite in the foreground.
    public var backgroundTimeRemaining: Double {
        guard let since = backgroundSince, state == .background || state == .suspended else { return .infinity }
        let elapsed = Double(clock.now() &- since) / 1e9
        return max(0, periodAllowance - elapsed)
    }

    /// Starts a finite-length task that keeps the daemon awake in the background until it is
    /// ended or the background time runs out. Then `expirationHandler` runs, on ``queue``; it
    /// should make the work stop and end the task before it returns, or the task is reported
    /// through ``taskOverran``.
    public func beginBackgroundTask(name: String, expirationHandler: (@Sendable () -> Void)? = nil) -> BackgroundTaskIdentifier {
        let identifier = BackgroundTaskIdentifier(rawValue: nextTaskID)
        nextTaskID += 1
        tasks[identifier] = BackgroundTask(name: name, expirationHandler: expirationHandler)
        return identifier
    }

    /// Ends a task. Ending one twice, or `.invalid`, does nothing.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard tasks.removeValue(forKey: identifier) != nil else { return }
        suspendIfIdle()
    }

    /// The names of the tasks still running.
    public var runningTaskNames: [String] {
        tasks.sorted { $0.key.rawValue < $1.key.rawValue }.map(\.value.name)
    }

    // MARK: - Private

    /// Begins a period in the background of `allowance` seconds from now, moving to the
    /// `background` state (posting `name`, if any) and setting the expiry timer.
    private func startBackgroundPeriod(allowance: Double, forFetch: Bool, posting name: Notification.Name?) {
        backgroundSince = clock.now()
        periodAllowance = allowance
        wokenForFetch = forFetch
        timeExpired = false
        set(.background, posting: name)
        scheduleExpiry()
    }

    private func set(_ newState: ApplicationState, posting name: Notification.Name?) {
        state = newState
        if let name { notificationCenter.post(name: name, object: self) }
    }

    private func scheduleExpiry() {
        expiry?.cancel()
        let deadline = (backgroundSince ?? clock.now()) + UInt64(periodAllowance * 1e9)
        // The clock runs its work holding the queue it is given: an idle queue of our own, so
        // a busy application queue never holds up the clock (and the players' ticks) behind it.
        // The hop can still be on its way when the timer is cancelled: the period number tells.
        expiryPeriod += 1
        let period = expiryPeriod
        let queue = queue
        expiry = clock.schedule(at: deadline, on: timerQueue) { [weak self] in
            queue.async { [weak self] in self?.backgroundTimeDidExpire(period: period) }
        }
    }

    private func backgroundTimeDidExpire(period: Int) {
        guard period == expiryPeriod, expiry != nil else { return }
        expiry = nil
        guard state == .background else { return }
        timeExpired = true
        // Handlers end their tasks from here, synchronously, as UIKit asks: suspension waits for all of them.
        isExpiring = true
        let expiring = tasks.filter { !$0.value.expired }
        for (identifier, task) in expiring.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            tasks[identifier]?.expired = true
            task.expirationHandler?()
        }
        isExpiring = false
        for task in tasks.values where task.expired {
            taskOverran(task.name)
        }
        // A task that outlives its expiration is reported, then no longer keeps the daemon awake.
        tasks = tasks.filter { !$0.value.expired }
        suspendIfIdle()
    }

    private func suspendIfIdle() {
        guard state == .background, timeExpired || wokenForFetch, !isExpiring, tasks.isEmpty else { return }
        if backgroundMode == .audio && isPlayingAudio() { return }
        if isUpdatingLocationInBackground() { return }
        wokenForFetch = false
        set(.suspended, posting: Self.didSuspendNotification)
    }
}

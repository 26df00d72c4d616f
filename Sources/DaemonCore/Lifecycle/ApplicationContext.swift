import FeedFetch
import Synchronization

/// What the partition and the state keeper need from the application they run
/// in: waking it for a command, its state for `status`, and background tasks.
///
/// Every method is called on the partition's queue.
package protocol ApplicationContext: AnyObject, Sendable {
    /// A command that needs the player is about to run: a suspended daemon wakes.
    func commandNeedsPlayer()
    /// Extra `status` lines (`appstate`, `backgroundtimeremaining`).
    var statusFields: [(String, String)] { get }
    /// Whether ``statusFields`` stay as they are until the application's state changes (no
    /// background time counting down), so a rendered `status` may be kept (``StatusSnapshot``).
    var statusFieldsAreSteady: Bool { get }
    /// Starts a background task named `name`: it keeps the daemon from being suspended
    /// until ended, and is told to stop when the background time runs out.
    func beginBackgroundActivity(named name: String) -> BackgroundActivity
}

/// A background task in progress, usable from any thread.
package final class BackgroundActivity: BackgroundFetchTask {
    private let expired = Atomic<Bool>(false)
    private let ending: Mutex<(@Sendable () -> Void)?>

    /// `end` is called once, by the first ``end()``.
    init(end: @escaping @Sendable () -> Void) {
        ending = Mutex(end)
    }

    /// True once the background time ran out: the work should stop soon, then ``end()``.
    var isExpired: Bool { expired.load(ordering: .relaxed) }

    /// Marks the activity expired, for the application's expiration handler: the work stops
    /// at its next check. Returns true if the activity had not ended yet, in which case the
    /// caller ends its task there and then, and a later ``end()`` does nothing.
    func expire() -> Bool {
        expired.store(true, ordering: .relaxed)
        return ending.withLock { end in
            defer { end = nil }
            return end != nil
        }
    }

    /// Ends the task. Later calls do nothing.
    package func end() {
        let end = ending.withLock { end -> (@Sendable () -> Void)? in
            defer { end = nil }
            return end
        }
        end?()
    }
}

/// A context with no life cycle: never suspended, tasks that never expire.
final class AlwaysActiveContext: ApplicationContext {
    func commandNeedsPlayer() {}
    var statusFields: [(String, String)] { [] }
    var statusFieldsAreSteady: Bool { true }
    func beginBackgroundActivity(named name: String) -> BackgroundActivity { BackgroundActivity {} }
}

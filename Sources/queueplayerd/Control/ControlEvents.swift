import MPDProtocol
import Synchronization

/// Carries changes of the daemon's state to every connected client's idle
/// bookkeeping (MPD's "idle events").
final class ControlEvents: Sendable {
    private let subscribers = Mutex<[ObjectIdentifier: @Sendable (Set<Subsystem>) -> Void]>([:])

    /// Reports that `subsystems` changed.
    func post(_ subsystems: Set<Subsystem>) {
        let targets = subscribers.withLock { Array($0.values) }
        for target in targets { target(subsystems) }
    }

    /// Adds a subscriber, keyed by its owner.
    func subscribe(_ owner: AnyObject, _ receive: @escaping @Sendable (Set<Subsystem>) -> Void) {
        subscribers.withLock { $0[ObjectIdentifier(owner)] = receive }
    }

    func unsubscribe(_ owner: AnyObject) {
        _ = subscribers.withLock { $0.removeValue(forKey: ObjectIdentifier(owner)) }
    }
}

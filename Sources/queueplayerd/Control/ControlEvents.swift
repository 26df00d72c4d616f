import Dispatch
import MPDProtocol
import Synchronization

/// Carries changes of the daemon's state to every connected client's idle
/// bookkeeping (MPD's "idle events").
///
/// Changes are gathered and handed out once the controller's current work is
/// done, so what one command changes arrives in one idle reply, as with mpd
/// (`clear` while playing: `changed: playlist` and `changed: player` together).
final class ControlEvents: Sendable {
    private struct State {
        var subscribers: [ObjectIdentifier: @Sendable (Set<Subsystem>) -> Void] = [:]
        var pending: Set<Subsystem> = []
        var flushScheduled = false
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue

    /// Creates a carrier that delivers after the work running on `queue` (the controller's).
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Reports that `subsystems` changed.
    func post(_ subsystems: Set<Subsystem>) {
        let schedule = state.withLock { state -> Bool in
            state.pending.formUnion(subsystems)
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        if schedule { queue.async { [self] in flush() } }
    }

    /// Adds a subscriber, keyed by its owner.
    func subscribe(_ owner: AnyObject, _ receive: @escaping @Sendable (Set<Subsystem>) -> Void) {
        state.withLock { $0.subscribers[ObjectIdentifier(owner)] = receive }
    }

    func unsubscribe(_ owner: AnyObject) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(owner)) }
    }

    private func flush() {
        let (changed, targets) = state.withLock { state -> (Set<Subsystem>, [@Sendable (Set<Subsystem>) -> Void]) in
            defer {
                state.pending = []
                state.flushScheduled = false
            }
            return (state.pending, Array(state.subscribers.values))
        }
        guard !changed.isEmpty else { return }
        for target in targets { target(changed) }
    }
}

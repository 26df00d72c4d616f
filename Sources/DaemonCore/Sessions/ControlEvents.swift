import Dispatch
import MPDProtocol
import Synchronization

/// Carries changes of the daemon's state to every connected client's idle
/// bookkeeping (MPD's "idle events").
///
/// Changes are gathered and handed out once the partition's current work is
/// done, so what one command changes arrives in one idle reply, as with mpd
/// (`clear` while playing: `changed: playlist` and `changed: player` together).
package final class ControlEvents: Sendable {
    private struct State {
        var subscribers: [ObjectIdentifier: @Sendable (Set<Subsystem>) -> Void] = [:]
        /// The subscriber of each client (``subscribe(_:client:_:)``).
        var clients: [Int: ObjectIdentifier] = [:]
        var pending: Set<Subsystem> = []
        /// Changes for some subscribers only (a `message` for the clients it was sent to).
        var pendingFor: [ObjectIdentifier: Set<Subsystem>] = [:]
        var flushScheduled = false
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue

    /// The replies the event loop may answer `status` and `currentsong` with; every change
    /// posted here makes them stale at once, before the idle replies go out.
    package let statusSnapshot = StatusSnapshot()

    /// Creates a carrier that delivers after the work running on `queue` (the partition's).
    package init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Reports that `subsystems` changed.
    package func post(_ subsystems: Set<Subsystem>) {
        statusSnapshot.invalidate()
        let schedule = state.withLock { state -> Bool in
            state.pending.formUnion(subsystems)
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        if schedule { queue.async { [self] in flush() } }
    }

    /// Reports that `subsystems` changed for the given clients only.
    func post(_ subsystems: Set<Subsystem>, toClients clients: some Sequence<Int>) {
        statusSnapshot.invalidate()
        let schedule = state.withLock { state -> Bool in
            for client in clients {
                guard let key = state.clients[client] else { continue }
                state.pendingFor[key, default: []].formUnion(subsystems)
            }
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        if schedule { queue.async { [self] in flush() } }
    }

    /// Adds a subscriber, keyed by its owner; `client` names the control-socket client it
    /// serves, for changes posted to some clients only.
    package func subscribe(_ owner: AnyObject, client: Int? = nil, _ receive: @escaping @Sendable (Set<Subsystem>) -> Void) {
        state.withLock {
            $0.subscribers[ObjectIdentifier(owner)] = receive
            if let client { $0.clients[client] = ObjectIdentifier(owner) }
        }
    }

    package func unsubscribe(_ owner: AnyObject) {
        state.withLock { state in
            let key = ObjectIdentifier(owner)
            state.subscribers.removeValue(forKey: key)
            state.pendingFor.removeValue(forKey: key)
            state.clients = state.clients.filter { $0.value != key }
        }
    }

    private func flush() {
        let deliveries = state.withLock { state -> [(@Sendable (Set<Subsystem>) -> Void, Set<Subsystem>)] in
            defer {
                state.pending = []
                state.pendingFor = [:]
                state.flushScheduled = false
            }
            return state.subscribers.compactMap { key, receive in
                let changed = state.pending.union(state.pendingFor[key] ?? [])
                return changed.isEmpty ? nil : (receive, changed)
            }
        }
        for (receive, changed) in deliveries { receive(changed) }
    }
}

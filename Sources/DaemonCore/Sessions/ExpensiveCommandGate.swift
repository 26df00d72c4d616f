import Dispatch
import Synchronization

/// Lets one expensive command at a time onto the partition's queue.
///
/// The partition's queue is serial and first come, first served: a `status` sent while 20
/// clients each have a `playlistinfo` of a long queue waiting there would wait for all 20.
/// Expensive work (``MPDProtocol/Command/isExpensive``: its cost grows with the queue or the
/// library) waits here instead, in order, and enters the queue only when the previous
/// expensive work has finished; cheap commands go straight to the queue. So any command
/// waits for at most one expensive command of another client.
package final class ExpensiveCommandGate: Sendable {
    private struct State {
        /// Expensive work is on the partition's queue.
        var isBusy = false
        var waiting: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let queue: PartitionQueue

    /// A gate in front of the partition's queue.
    package init(queue: PartitionQueue) {
        self.queue = queue
    }

    /// Runs `work` on the queue once no other expensive work is there.
    func submit(_ work: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard state.isBusy else {
                state.isBusy = true
                return true
            }
            state.waiting.append(work)
            return false
        }
        if runNow { run(work) }
    }

    private func run(_ work: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            work()
            let next = state.withLock { state -> (@Sendable () -> Void)? in
                guard !state.waiting.isEmpty else {
                    state.isBusy = false
                    return nil
                }
                return state.waiting.removeFirst()
            }
            if let next { run(next) }
        }
    }
}

import Dispatch
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
@testable import DaemonCore

/// A ``ConnectionScheduler`` that runs nothing until the test says so, and then on the test's
/// own thread (the `EmbeddedEventLoop`'s): the partition's work on the partition's queue (the
/// test thread waits for it), the rest in place. So a test decides exactly when a lent session
/// comes back, and can close the client or post events in between.
final class ManualConnectionScheduler: ConnectionScheduler {
    private let partition: Partition
    /// Work and hops in the order they were asked for.
    private let pending = Mutex<[@Sendable () -> Void]>([])

    init(partition: Partition) {
        self.partition = partition
    }

    /// How many pieces of work wait for ``runAll(loop:)``.
    var pendingCount: Int { pending.withLock { $0.count } }

    func run<Result: Sendable>(_ placement: ConnectionWorkPlacement, on loop: any EventLoop,
                               _ work: @escaping @Sendable () -> Result,
                               deliver: @escaping @Sendable (Result) -> Void) {
        let partition = partition
        pending.withLock {
            $0.append {
                let result = placement == .protocolOnly ? work() : Self.onPartition(partition, work)
                deliver(result)
            }
        }
    }

    func hop(to loop: any EventLoop, _ body: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(body) }
    }

    /// Runs what is pending, lets the partition's queue finish what that posted (idle events
    /// are delivered from there), and runs the loop; until nothing is left.
    func runAll(loop: EmbeddedEventLoop) {
        for _ in 0..<1000 {
            Self.onPartition(partition) {}
            let jobs = pending.withLock { jobs in
                defer { jobs = [] }
                return jobs
            }
            loop.run()
            if jobs.isEmpty { return }
            for job in jobs { job() }
            loop.run()
        }
        Issue.record("the connection's work never settled")
    }

    /// Runs `work` on the partition's queue and waits for it (a test thread, never a loop).
    private static func onPartition<Result: Sendable>(_ partition: Partition, _ work: @escaping @Sendable () -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result?>(nil)
        partition.perform { _ in
            result.withLock { $0 = work() }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}


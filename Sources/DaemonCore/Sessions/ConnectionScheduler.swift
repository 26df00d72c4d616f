import Dispatch
import NIOCore

/// Where a control connection's work runs off its event loop, and how results come back.
///
/// The seam between ``ControlConnection`` (which lives on one event loop and never blocks it)
/// and the places its commands run: the partition's queue, the ``ExpensiveCommandGate`` in front
/// of it, or a background queue for lists of protocol-level commands. Tests put a scheduler of
/// their own here that runs each piece of work when the test says, on the test's thread, so an
/// `EmbeddedChannel` can drive the connection deterministically (`DaemonTests`).
package protocol ConnectionScheduler: Sendable {
    /// Runs `work` where `placement` says, then hands its result to `deliver` on `loop`.
    func run<Result: Sendable>(_ placement: ConnectionWorkPlacement, on loop: any EventLoop,
                               _ work: @escaping @Sendable () -> Result,
                               deliver: @escaping @Sendable (Result) -> Void)

    /// Hands `body` to `loop` from whatever thread an idle event was posted on.
    func hop(to loop: any EventLoop, _ body: @escaping @Sendable () -> Void)
}

/// Where a piece of a connection's work belongs.
package enum ConnectionWorkPlacement: Sendable {
    /// On the partition's queue: commands that need the player or the queue.
    case partition
    /// On the partition's queue, behind the ``ExpensiveCommandGate``: commands whose cost grows
    /// with the queue or the library.
    case expensive
    /// Off both the loop and the partition: a command list of protocol-level commands only.
    case protocolOnly
}

/// The daemon's scheduler: the partition's queue, the gate, and a concurrent queue.
package struct PartitionScheduler: ConnectionScheduler {
    /// Where lists of protocol-level commands run: off the event loop and off the partition.
    private static let protocolQueue = DispatchQueue(label: "queueplayerd.control.protocol", attributes: .concurrent)

    /// The partition's queue; the commands catch the partition up with the player themselves
    /// (``CommandDispatcher``).
    let queue: PartitionQueue
    let gate: ExpensiveCommandGate

    package init(queue: PartitionQueue, gate: ExpensiveCommandGate) {
        self.queue = queue
        self.gate = gate
    }

    package func run<Result: Sendable>(_ placement: ConnectionWorkPlacement, on loop: any EventLoop,
                               _ work: @escaping @Sendable () -> Result,
                               deliver: @escaping @Sendable (Result) -> Void) {
        let job: @Sendable () -> Void = {
            let result = work()
            loop.execute { deliver(result) }
        }
        switch placement {
        case .partition: queue.async(job)
        case .expensive: gate.submit(job)
        case .protocolOnly: Self.protocolQueue.async(execute: job)
        }
    }

    package func hop(to loop: any EventLoop, _ body: @escaping @Sendable () -> Void) {
        loop.execute(body)
    }
}

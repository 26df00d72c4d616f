import MPDProtocol
import NIOCore

/// Runs a client's pending work off its event loop, for the control socket's connections and
/// the WebSocket's clients alike: each lends its ``ClientSession`` here when a step says work is
/// ready, and takes it back with the replies.
///
/// What it does with a lent session, in order:
/// * the remote playlists the work names are fetched first (``RemotePlaylists``), off the loop
///   and off the partition's queue;
/// * the work runs where ``placement(of:needsExecutor:)`` says (``ConnectionScheduler``): on the
///   partition's queue, behind the ``ExpensiveCommandGate`` for an expensive command, or on a
///   background queue for a list of protocol-level commands;
/// * after a cheap command on the partition's queue, the requests the client already sent run
///   in the same work item (``runFollowing(_:after:)``), up to ``batchLimit`` of them;
/// * a wrong password's answer comes back with the wait ``AccessPolicy`` gives it (``Lent/delay``),
///   which the transport holds the answer for (a timer on the loop, or the client's task asleep).
///
/// Nothing here blocks: the result is delivered on the loop the caller names, or awaited.
package struct SessionRunner: Sendable {
    /// The most pipelined requests one work item on the partition's queue runs, and the most
    /// reply bytes it gathers: what keeps a flooding client from holding the queue (a few µs
    /// per cheap command in a release build, so well under a millisecond per batch) or running
    /// far ahead of what it reads.
    static let batchLimit = 128
    package static let batchOutputLimit = 32 * 1024

    /// Runs the commands, on the partition's queue.
    package let executor: any CommandExecutor & Sendable
    /// Where the work runs.
    let scheduler: any ConnectionScheduler
    /// Remote playlists fetched before the work that names them.
    let remotePlaylists: RemotePlaylists
    /// The wait before a wrong password's answer, and whether one is being held.
    package let access: AccessPolicy

    package init(executor: any CommandExecutor & Sendable, scheduler: any ConnectionScheduler, remotePlaylists: RemotePlaylists, access: AccessPolicy) {
        self.executor = executor
        self.scheduler = scheduler
        self.remotePlaylists = remotePlaylists
        self.access = access
    }

    /// A lent session coming back, with what its work answered and how long that answer is to
    /// be held back (nil: at once).
    package struct Lent: Sendable {
        package var session: ClientSession
        package var actions: [SessionAction]
        package var delay: Double?
    }

    /// Where a session's ready work runs (``ClientSession/step(answering:)``'s `ready`).
    static func placement(of session: ClientSession, needsExecutor: Bool) -> ConnectionWorkPlacement {
        !needsExecutor ? .protocolOnly : session.isPendingWorkExpensive ? .expensive : .partition
    }

    /// Lends `session` to its pending work and hands it back to `deliver`, on `loop`.
    package func lend(_ session: ClientSession, needsExecutor: Bool, on loop: any EventLoop,
              deliver: @escaping @Sendable (Lent) -> Void) {
        let placement = Self.placement(of: session, needsExecutor: needsExecutor)
        let remote = session.pendingPlaylistURLs
        guard remote.isEmpty else {
            let runner = self
            let fetchThenSchedule: @Sendable () async -> Void = {
                await runner.remotePlaylists.fetch(remote, for: session.clientID)
                runner.schedule(session, placement, on: loop, deliver: deliver)
            }
            Task(operation: fetchThenSchedule)
            return
        }
        schedule(session, placement, on: loop, deliver: deliver)
    }

    /// ``lend(_:needsExecutor:on:deliver:)``, awaited (the caller's task suspends, no thread waits).
    package func lend(_ session: ClientSession, needsExecutor: Bool, on loop: any EventLoop) async -> Lent {
        await withCheckedContinuation { done in
            lend(session, needsExecutor: needsExecutor, on: loop) { done.resume(returning: $0) }
        }
    }

    private func schedule(_ lent: ClientSession, _ placement: ConnectionWorkPlacement, on loop: any EventLoop,
                          deliver: @escaping @Sendable (Lent) -> Void) {
        let (executor, access) = (executor, access)
        scheduler.run(placement, on: loop, {
            var session = lent
            var actions: [SessionAction]
            switch placement {
            case .partition:
                actions = session.runPending(executor: executor.execute)
                Self.runFollowing(&session, after: &actions, executor: executor, access: access)
            case .expensive:
                actions = session.runPending(executor: executor.execute)
            case .protocolOnly:
                // Only protocol-level commands are placed here: none reaches an executor.
                actions = session.runPending { command, _ throws(MPDError) in
                    throw MPDError(.unknown, "\(command.name) needs the partition's queue")
                }
            }
            let delay = placement == .protocolOnly ? nil : access.takeAnswerDelay(client: session.clientID)
            return Lent(session: session, actions: actions, delay: delay)
        }, deliver: deliver)
    }

    /// Runs the requests that follow a cheap command in the session's input, on the partition's
    /// queue, up to ``batchLimit`` of them and ``batchOutputLimit`` bytes of replies, adding
    /// their text replies (merged into one write) to `actions`. It stops at the first request that
    /// runs elsewhere, expensive work (the gate) or a list of protocol-level commands, which is
    /// left pending for the transport to lend again; and when the client idles, closes or has no
    /// complete line left.
    private static func runFollowing(_ session: inout ClientSession, after actions: inout [SessionAction],
                                     executor: any CommandExecutor, access: AccessPolicy) {
        guard actions.count == 1, case .send(var text) = actions[0] else { return }
        var rest: [SessionAction] = []
        batch: for _ in 1..<batchLimit {
            guard !session.isIdle, !session.isClosed, text.utf8.count < batchOutputLimit else { break }
            // A wrong password whose answer is held back ends the batch: the commands after it
            // wait for that answer, and a pipelined guesser gets one guess per wait.
            guard !access.isHoldingAnswer(client: session.clientID) else { break }
            let more: [SessionAction]
            switch session.step() {
            case .needsInput:
                break batch
            case .handled(let handled):
                more = handled
            case .ready(let needsExecutor):
                guard needsExecutor, !session.isPendingWorkExpensive else { break batch }
                more = session.runPending(executor: executor.execute)
            }
            for (index, action) in more.enumerated() {
                guard case .send(let reply) = action else {
                    // A binary reply or a close: written as they come, after the text; the batch ends.
                    rest = Array(more[index...])
                    break batch
                }
                text += reply
            }
        }
        actions = [.send(text)] + rest
    }
}

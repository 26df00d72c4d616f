import DaemonCore
import Logging
import MPDProtocol
import NIOCore
import Synchronization
import QueuePlayer

/// One client of the control socket: feeds what it sends to its ``ClientSession``
/// and writes back the replies.
///
/// Nothing here blocks the event loop, and one client cannot hold up the others:
/// * Requests are taken from the session a step at a time (``ClientSession/step(answering:)``).
///   Lines the session answers itself are answered here, on the event loop, several to a step,
///   and so are `status` and `currentsong` while the partition's kept replies hold
///   (``StatusSnapshot``); the replies of a turn go out as one write. A command that needs the
///   player, or a command list holding one, runs on the partition's queue (an expensive one
///   through the ``ExpensiveCommandGate``, so that commands of other clients wait for at most
///   one of those); a list of protocol-level commands only (a long list of `ping`s) on a
///   background queue, so it holds neither the loop nor the partition. Where is the
///   ``ConnectionScheduler``'s to say.
///   Meanwhile the session is lent to that work item; the reply is written back on the event
///   loop, and only then is the client's next request taken, so its replies keep their order.
///   A client that pipelines cheap commands has the ones it already sent run in the same work
///   item, a few dozen at a time (``SessionRunner``), as mpd runs every
///   complete line it has read at once: one hop to the partition's queue and back per batch,
///   not per command.
/// * Backpressure: a request is taken only while the channel is writable, i.e. while the
///   client's unread output is below the channel's high water mark. A client that does not
///   read its replies therefore has at most that plus one reply waiting, and none of its
///   further commands run. Past ``maxOutputBufferSize`` of writes not yet taken by the socket
///   (a single reply that large) it is disconnected, as mpd drops a client whose output
///   buffer overflows, and the log says so.
/// * Input is read only when the session has no complete line left (the pipeline's `read`
///   is held back until then), at most ``readSize`` bytes per turn of the event loop, so a
///   client that floods commands takes turns with the others and its input stays bounded.
/// * End of input (the client shut down its sending side, `printf 'status\n' | socat - UNIX-CONNECT:...`,
///   or closed at once after a pipelined batch): the channel allows remote half-closure, so
///   the end arrives as `ChannelEvent.inputClosed` behind the bytes before it, and every
///   complete command read is still answered, in order; the connection is closed once the
///   session has no complete line left. A partial line, or a command list left open, is
///   dropped, as mpd does.
/// * Timeout (mpd's `connection_timeout`): a client that sends no complete line for
///   ``timeout`` is closed, so that silent clients (or ones that trickle bytes and never end a
///   line) do not keep their places of the ``ClientLimit``. The time restarts with each line the
///   session takes and each reply of work lent off the loop; it stands still while the client
///   waits in `idle` and restarts when the idle ends. One timer per client, set again only when
///   it fires: a client pipelining commands costs a clock read per step, not a timer.
///
/// Its state belongs to the channel's event loop: work that runs elsewhere takes the lent
/// session with it and comes back through a `NIOLoopBound` reference, which checks the loop.
package final class ControlConnection: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    /// Bytes read from a client per turn of the event loop (one read per turn).
    static let readSize = 4096

    /// mpd's default `max_output_buffer_size` (8192 KiB): a client whose unsent output grows
    /// past it is disconnected. With backpressure only a single reply that large gets there.
    static let maxOutputBufferSize = 8 * 1024 * 1024

    /// mpd's default `connection_timeout`, in seconds (`--connection-timeout`).
    package static let defaultTimeout = 60.0

    // Everything below is touched only on the channel's event loop.
    /// The daemon as the client's connection uses it.
    private let environment: ClientEnvironment
    private var events: ControlEvents { environment.events }
    private var scheduler: any ConnectionScheduler { environment.scheduler }
    private let logger: Logger
    private let outputLimit: Int
    /// How long the client may send no complete line (``defaultTimeout``).
    private let timeout: TimeAmount
    /// When the client's last complete line was taken, or its idle or lent work ended.
    private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// ``ClientSession/linesTaken`` as last seen: a change is activity.
    private var linesSeen = 0
    /// The pending check of ``timeout``.
    private var timeoutCheck: Scheduled<Void>?
    /// The lent session held back with a wrong password's answer, until its wait is over.
    private var heldAnswer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    /// This handler, for closures that come back to the loop (checked there).
    private var bound: NIOLoopBound<ControlConnection>?
    /// Bytes written to the channel that the socket has not taken yet.
    private var unsentBytes = 0
    /// The client's protocol state; nil while it is lent to a command running off the loop.
    private var session: ClientSession? = ClientSession()
    /// Changes reported while the session was lent, delivered when it comes back.
    private var changedWhileLent: Set<Subsystem> = []
    /// Input that arrived while the session was lent (normally none: reads are held back).
    private var inputWhileLent: ByteBuffer?
    /// The session has no complete line: a read may be passed on.
    private var wantsInput = true
    /// The pipeline asked for a read that has not been passed on yet.
    private var readRequested = false
    /// The session asked to close (or the client overflowed): nothing more is run or written.
    private var isClosing = false
    /// The client shut down its sending side: nothing more will be read, and the connection
    /// closes once the session has answered every complete line it holds.
    private var inputEnded = false
    /// Replies gathered since the last flush, written to the channel as one buffer: a client
    /// pipelining small commands costs one channel write per batch, not one per reply.
    private var output: ByteBuffer?

    /// Numbers the clients, for per-client state such as message subscriptions.
    private static let nextClientID = Atomic<Int>(1)
    /// This client's number (``ClientSession/clientID``).
    private let clientID = ControlConnection.nextClientID.wrappingAdd(1, ordering: .relaxed).oldValue

    /// Answers `status` and `currentsong` on the event loop while the partition's kept replies
    /// hold (``StatusSnapshot``).
    private let answerInline: (Command, CommandContext) -> String?

    /// - Parameters:
    ///   - outputLimit: the unsent output past which the client is dropped
    ///     (``maxOutputBufferSize``; tests give a smaller one).
    ///   - permissions: what the client may do until it sends a password (``AccessPolicy``).
    ///   - peer: its name in the log and in the count of failed passwords (``AccessPolicy/peerName(_:)``).
    ///   - isLocal: the client came through a Unix socket (``ClientSession/isLocal``).
    ///   - timeout: seconds without a complete line before the client is closed (``defaultTimeout``).
    init(environment: ClientEnvironment, logger: Logger,
         outputLimit: Int = ControlConnection.maxOutputBufferSize, permissions: Permission = .all, peer: String = "local",
         isLocal: Bool = true, timeout: Double = ControlConnection.defaultTimeout) {
        let snapshot = environment.events.statusSnapshot
        let playback = environment.playback
        answerInline = { command, context in
            snapshot.answer(command, context: context, conditions: { playback.playerConditions },
                            elapsed: { playback.player.audibleTimeWhilePlaying(of: $0)?.seconds })
        }
        self.environment = environment
        self.logger = logger
        self.outputLimit = outputLimit
        self.timeout = .nanoseconds(Int64(timeout * 1e9))
        session?.clientID = clientID
        session?.permissions = permissions
        session?.peer = peer
        session?.isLocal = isLocal
        session?.unavailableCommands = environment.unavailableCommands
    }

    // MARK: Channel events

    package func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        self.bound = bound
        events.subscribe(self, client: clientID) { [scheduler] changed in
            scheduler.hop(to: loop) { bound.value.notify(changed) }
        }
        write(ClientSession.greeting)
        flush(context)
        lastActivity = loop.now
        scheduleTimeoutCheck(at: lastActivity + timeout)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timeoutCheck?.cancel()
        timeoutCheck = nil
        events.unsubscribe(self)
        environment.clientDidDisconnect(clientID)
        self.context = nil
        bound = nil
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        wantsInput = false
        guard session != nil else {
            var kept = inputWhileLent ?? context.channel.allocator.buffer(capacity: buffer.readableBytes)
            kept.writeBuffer(&buffer)
            inputWhileLent = kept
            return
        }
        session?.append(buffer.readableBytesView)
        pump()
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump() }
        context.fireChannelWritabilityChanged()
    }

    /// Holds the pipeline's read back until the session wants input (see ``passReadIfWanted()``).
    package func read(context: ChannelHandlerContext) {
        readRequested = true
        passReadIfWanted()
    }

    /// The end of the client's input (``inputEnded``); other events pass on.
    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, case .inputClosed = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        inputEnded = true
        if heldAnswer != nil { return abandonHeldAnswer() }
        // Lent: the session is pumped when it comes back, and the close waits until then.
        if session != nil { pump() }
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: Requests

    /// Takes requests from the session while the client takes its replies: answers those the
    /// session handles, hands the next one that needs more off the loop, or asks for input.
    private func pump() {
        guard let context, !isClosing else { return }
        let channel = context.channel
        while channel.isWritable {
            guard let current = session else { return }
            if current.hasPendingWork {
                // A batch stopped before this work (``SessionRunner``): it runs where it belongs.
                flush(context)
                lend(needsExecutor: current.pendingWorkNeedsExecutor)
                return
            }
            guard let step = session?.step(answering: answerInline) else { return }
            noteLinesTaken()
            switch step {
            case .needsInput:
                if inputEnded {
                    // Every complete line is answered; what is left is a partial line or an
                    // open command list, which mpd drops too.
                    close(context)
                    return
                }
                wantsInput = true
                flush(context)
                passReadIfWanted()
                return
            case .handled(let actions):
                perform(actions)
                if isClosing { return }
                // Written once this much is gathered, so `isWritable` tells the truth.
                if let output, output.readableBytes >= SessionRunner.batchOutputLimit { flush(context) }
            case .ready(let needsExecutor):
                flush(context)
                lend(needsExecutor: needsExecutor)
                return
            }
        }
        flush(context)
    }

    /// Lends the session to its pending work (``SessionRunner``), and takes it back with the
    /// reply on the loop.
    private func lend(needsExecutor: Bool) {
        guard let context, let bound, let lent = session else { return }
        session = nil
        environment.runner.lend(lent, needsExecutor: needsExecutor, on: context.eventLoop) { done in
            bound.value.deliver(done)
        }
    }

    /// Takes back a lent session, or holds it back with its answer, a wrong password's
    /// (``AccessPolicy``): the client waits on a timer, its next command is taken only after
    /// the answer, and the loop goes on. A client that has shut its sending side is closed at
    /// once instead: a guesser that sends and goes does not keep its place for the wait.
    private func deliver(_ done: SessionRunner.Lent) {
        guard let delay = done.delay else { return takeBack(done.session, done.actions) }
        guard let context, let bound, !inputEnded else { return abandonHeldAnswer() }
        heldAnswer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(delay * 1e9))) {
            bound.value.heldAnswer = nil
            bound.value.takeBack(done.session, done.actions)
        }
    }

    /// Closes a client whose held answer no one is left to read.
    private func abandonHeldAnswer() {
        heldAnswer?.cancel()
        heldAnswer = nil
        guard let context, !isClosing else { return }
        isClosing = true
        context.close(promise: nil)
    }

    private func takeBack(_ returned: ClientSession, _ actions: [SessionAction]) {
        // The client went away while its work ran: nothing is written, the session is dropped.
        guard let context else { return }
        session = returned
        linesSeen = returned.linesTaken
        lastActivity = context.eventLoop.now
        perform(actions)
        if let input = inputWhileLent {
            inputWhileLent = nil
            session?.append(input.readableBytesView)
        }
        if !changedWhileLent.isEmpty {
            let changed = changedWhileLent
            changedWhileLent = []
            perform(session?.notify(changed) ?? [])
        }
        pump()
    }

    private func notify(_ changed: Set<Subsystem>) {
        guard let actions = session?.notify(changed) else {
            changedWhileLent.formUnion(changed)
            return
        }
        perform(actions)
        if let context, !actions.isEmpty {
            // The idle ended: its time restarts, as mpd schedules its timeout again.
            lastActivity = context.eventLoop.now
            flush(context)
        }
    }

    // MARK: Timeout

    /// Restarts the timeout if the session took a complete line since the last look.
    private func noteLinesTaken() {
        guard let taken = session?.linesTaken, taken != linesSeen, let context else { return }
        linesSeen = taken
        lastActivity = context.eventLoop.now
    }

    private func scheduleTimeoutCheck(at deadline: NIODeadline) {
        guard let context, let bound else { return }
        timeoutCheck = context.eventLoop.scheduleTask(deadline: deadline) { bound.value.checkTimeout() }
    }

    /// Closes the client if it has been silent for ``timeout``; otherwise looks again when it
    /// could be. A client in `idle`, or whose work runs off the loop, is not silent: its time
    /// restarts when that ends.
    private func checkTimeout() {
        timeoutCheck = nil
        guard let context, !isClosing else { return }
        let now = context.eventLoop.now
        guard let current = session, !current.isIdle else {
            scheduleTimeoutCheck(at: now + timeout)
            return
        }
        let due = lastActivity + timeout
        guard now >= due else {
            scheduleTimeoutCheck(at: due)
            return
        }
        logger.debug("client \(clientID): no command for \(Double(timeout.nanoseconds) / 1e9) s (--connection-timeout); disconnected")
        // At once, not after the unsent replies: a client that reads nothing would hold them.
        isClosing = true
        output = nil
        context.close(promise: nil)
    }

    /// Passes a held-back read on once the session has no complete line left, no work is
    /// running for the client and the client takes its replies.
    private func passReadIfWanted() {
        guard let context, readRequested, wantsInput, session != nil, !isClosing,
              context.channel.isWritable else { return }
        readRequested = false
        context.read()
    }

    // MARK: Output

    /// Each command answered with an ACK, at debug level as mpd logs the commands it runs
    /// (a `password`'s argument is never in the line: ``ClientSession/takeFailedCommands()``).
    private func logFailedCommands() {
        guard let failed = session?.takeFailedCommands(), !failed.isEmpty else { return }
        for command in failed {
            logger.debug("client \(clientID): command \"\(command.line)\" failed: \(command.ack)")
        }
    }

    private func perform(_ actions: [SessionAction]) {
        logFailedCommands()
        guard !actions.isEmpty, let context, !isClosing else { return }
        for action in actions {
            switch action {
            case .send(let text):
                write(text)
            case .sendBytes(let bytes):
                var buffer = output ?? context.channel.allocator.buffer(capacity: bytes.count)
                output = nil
                buffer.writeBytes(bytes)
                output = buffer
            case .close:
                close(context)
                return
            }
        }
    }

    /// Writes and flushes the gathered replies, then drops the client if what the socket did
    /// not take is past the limit.
    private func flush(_ context: ChannelHandlerContext) {
        guard let pending = output, let bound else { return }
        output = nil
        let count = pending.readableBytes
        unsentBytes += count
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in bound.value.unsentBytes -= count }
        context.writeAndFlush(wrapOutboundOut(pending), promise: written)
        if !isClosing, unsentBytes > outputLimit {
            isClosing = true
            logger.warning("client \(clientID): \(unsentBytes) bytes of replies unread, past the limit of \(outputLimit); disconnected")
            context.close(promise: nil)
        }
    }

    /// Closes the connection after what was written so far.
    private func close(_ context: ChannelHandlerContext) {
        isClosing = true
        let channel = context.channel
        let pending = output ?? channel.allocator.buffer(capacity: 0)
        output = nil
        context.writeAndFlush(wrapOutboundOut(pending)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func write(_ text: String) {
        guard let context else { return }
        var buffer = output ?? context.channel.allocator.buffer(capacity: max(text.utf8.count, 1024))
        output = nil
        buffer.writeString(text)
        output = buffer
    }
}

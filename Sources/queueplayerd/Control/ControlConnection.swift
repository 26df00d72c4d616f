import MPDProtocol
import NIOCore
import Synchronization

/// One client of the control socket: feeds what it sends to its ``ClientSession``
/// and writes back the replies.
///
/// Commands run on the controller's queue; replies and idle wake-ups are
/// written on the connection's event loop. A client that does not read its
/// replies is not read from either, so its unread output stays bounded.
final class ControlConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Bytes read from a client per turn of the event loop (one read per turn): a client
    /// that floods commands takes turns with the others.
    static let readSize = 512

    // Touched only on the channel's event loop.
    private var session = ClientSession()
    private var context: ChannelHandlerContext?
    private let controller: PlaybackController
    private let events: ControlEvents
    /// Requests that arrived while the client was not taking its replies; run later, a slice at a time.
    private var backlog = ByteBuffer()
    private var backlogTurnScheduled = false

    /// The most input kept for a client that does not read its replies; beyond it the
    /// client is disconnected (mpd likewise drops a client whose output buffer overflows).
    static let backlogLimit = 64 * 1024

    init(controller: PlaybackController, events: ControlEvents) {
        self.controller = controller
        self.events = events
    }

    /// Numbers the clients, for per-client state such as message subscriptions.
    private static let nextClientID = Atomic<Int>(1)

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        session.clientID = Self.nextClientID.wrappingAdd(1, ordering: .relaxed).oldValue
        let loop = context.eventLoop
        events.subscribe(self, client: session.clientID) { [self] changed in
            loop.execute { self.perform(self.session.notify(changed)) }
        }
        write(ClientSession.greeting)
        context.flush()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.unsubscribe(self)
        let (controller, client) = (controller, session.clientID)
        controller.queue.async { controller.clientDidDisconnect(client) }
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard context.channel.isActive else { return }
        var buffer = unwrapInboundIn(data)
        if !context.channel.isWritable || backlog.readableBytes > 0 {
            // Replies are piling up unread: keep the requests, but do not run them now.
            backlog.writeBuffer(&buffer)
            if backlog.readableBytes > Self.backlogLimit { context.close(promise: nil) }
            return
        }
        run(buffer.readableBytesView)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Backpressure: a client that does not read its replies is not read from either,
        // so its unread output stays bounded (by the channel's high water mark).
        _ = context.channel.setOption(ChannelOptions.autoRead, value: context.channel.isWritable)
        if context.channel.isWritable { runBacklogSlice() }
        context.fireChannelWritabilityChanged()
    }

    private func run(_ bytes: ByteBufferView) {
        let actions = controller.queue.sync {
            session.receive(bytes, executor: controller)
        }
        perform(actions)
    }

    /// Runs one read's worth of the kept requests, and schedules the next slice.
    private func runBacklogSlice() {
        guard let context, !backlogTurnScheduled, backlog.readableBytes > 0,
              context.channel.isActive, context.channel.isWritable else { return }
        let slice = backlog.readSlice(length: min(Self.readSize, backlog.readableBytes))!
        backlog.discardReadBytes()
        run(slice.readableBytesView)
        guard backlog.readableBytes > 0 else { return }
        backlogTurnScheduled = true
        context.eventLoop.scheduleTask(in: .milliseconds(1)) { [self] in
            backlogTurnScheduled = false
            runBacklogSlice()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func perform(_ actions: [SessionAction]) {
        guard let context else { return }
        for action in actions {
            switch action {
            case .send(let text):
                write(text)
            case .close:
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
                    channel.close(promise: nil)
                }
                return
            }
        }
        if !actions.isEmpty {
            // A client that went away mid-reply: stop working for it at once (its unread
            // commands would otherwise still be run, and their replies thrown away).
            let flushed = context.eventLoop.makePromise(of: Void.self)
            let channel = context.channel
            flushed.futureResult.whenFailure { _ in channel.close(promise: nil) }
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: flushed)
        }
    }

    private func write(_ text: String) {
        guard let context else { return }
        context.write(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
    }
}

import MPDProtocol
import NIOCore

/// One client of the control socket: feeds what it sends to its ``ClientSession``
/// and writes back the replies.
///
/// Commands run on the controller's queue; replies and idle wake-ups are
/// written on the connection's event loop. A client that does not read its
/// replies is not read from either, so its unread output stays bounded.
final class ControlConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    // Touched only on the channel's event loop.
    private var session = ClientSession()
    private var context: ChannelHandlerContext?
    private let controller: PlaybackController
    private let events: ControlEvents

    init(controller: PlaybackController, events: ControlEvents) {
        self.controller = controller
        self.events = events
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        events.subscribe(self) { [self] changed in
            loop.execute { self.perform(self.session.notify(changed)) }
        }
        write(ClientSession.greeting)
        context.flush()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.unsubscribe(self)
        self.context = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let actions = controller.queue.sync {
            session.receive(buffer.readableBytesView, executor: controller)
        }
        perform(actions)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // Backpressure: stop reading requests while replies pile up unread.
        _ = context.channel.setOption(ChannelOptions.autoRead, value: context.channel.isWritable)
        context.fireChannelWritabilityChanged()
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
                context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0))).whenComplete { _ in
                    context.close(promise: nil)
                }
                return
            }
        }
        if !actions.isEmpty { context.flush() }
    }

    private func write(_ text: String) {
        guard let context else { return }
        context.write(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
    }
}

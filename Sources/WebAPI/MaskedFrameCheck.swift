import NIOCore
import NIOHTTP1
import NIOWebSocket

/// RFC 6455 5.1: a server closes the connection, with status 1002, on a frame from its client
/// that is not masked. Neither NIO's frame decoder nor hummingbird's WebSocket handler checks it,
/// and hummingbird adds the WebSocket's handlers itself, so this one gets in by way of
/// ``Installer``: put at the pipeline's end when an upgrade is accepted, before the WebSocket's
/// handlers exist, it puts the check right after the frame decoder when the upgrade handler
/// reports the upgrade done, which it does before passing on any byte that followed the request.
final class MaskedFrameCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var isClosing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        guard unwrapInboundIn(data).maskKey != nil else {
            isClosing = true
            var payload = context.channel.allocator.buffer(capacity: 2)
            payload.write(webSocketErrorCode: .protocolError)
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
            context.writeAndFlush(wrapOutboundOut(close)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            return
        }
        context.fireChannelRead(data)
    }

    /// Passes everything on untouched (HTTP parts, then the WebSocket's bytes) and leaves at the
    /// upgrade's end, or at the first message when the upgrade was not made.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        /// Never unwrapped: what comes through is HTTP parts or bytes.
        typealias InboundIn = Never

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .upgradeComplete? = event as? HTTPServerUpgradeEvents {
                do {
                    let pipeline = context.pipeline.syncOperations
                    let decoder = try pipeline.handler(type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
                    try pipeline.addHandler(MaskedFrameCheck(), position: .after(decoder))
                } catch {
                    // No frame decoder where NIO puts it: better no WebSocket than an unchecked one.
                    context.close(promise: nil)
                }
                context.fireUserInboundEventTriggered(event)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

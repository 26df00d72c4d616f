import HTTPTypes
import NIOCore
import NIOHTTP1

/// Every connection of the web port goes through this handler, right after the HTTP decoder and
/// before hummingbird's upgrade handler. It answers what hummingbird's WebSocket-upgrade channel
/// leaves unanswered:
///
/// * A request must come in within ``requestTimeout`` (its head and any body), counted from the
///   connection's start or from the end of the previous response: hummingbird's upgrade channel
///   adds its idle handler only once a first request has come (its `notUpgradingCompletionHandler`),
///   so before it a silent or trickling connection was never closed. A connection still waiting
///   for a request's head is closed (whether a head is under way cannot be told here: the decoder
///   passes on only whole heads); one whose body is late is answered 408 and closed.
/// * A request the decoder cannot parse (a header section over the decoder's limit, both
///   `Transfer-Encoding` and `Content-Length`, TLS, HTTP/0.9) is answered 4xx and closed: the
///   upgrade channel sets up the pipeline without NIO's error handler, and without one the decoder
///   stops reading and the connection stays open, unanswered.
/// * A head that is not plain HTTP/1.x, or that carries two `Host` headers (which could name two
///   hosts to two readers), is answered 400 and closed.
/// * Every request's access is checked (``checkAccess``), and a refusal answered with its own
///   status (401, 403), a WebSocket upgrade's too: hummingbird's upgrade handler would answer
///   any upgrade it is told not to make with 400.
///
/// An upgrade the check lets through is the connection's last HTTP request: the handler forwards
/// it and leaves the pipeline (it must not see the WebSocket's bytes). It never blocks: the
/// timer and a refusal's delay are scheduled on the channel's event loop.
final class HTTPRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A request answered here instead of being passed on: its status and a line of text, sent
    /// after `delay`, and then the connection is closed.
    struct Refusal: Sendable, Equatable {
        var status: HTTPResponse.Status
        var reason: String
        var delay: TimeAmount = .zero
    }

    /// How long a request may take to come in.
    let requestTimeout: TimeAmount
    /// Checks a request's head, with the peer's address: nil lets it through.
    private let checkAccess: @Sendable (HTTPRequestHead, SocketAddress?) -> Refusal?

    /// Request heads read, and responses written to their end.
    private var requests = 0
    private var responses = 0
    /// A request's head has come and its end not yet.
    private var isReadingRequest = false
    /// A response's head has been written and its end not yet.
    private var isResponding = false
    /// Set once a refusal is decided: nothing more is read or passed on.
    private var isRefusing = false
    private var timer: Scheduled<Void>?

    init(requestTimeout: TimeAmount, checkAccess: @escaping @Sendable (HTTPRequestHead, SocketAddress?) -> Refusal? = { _, _ in nil }) {
        self.requestTimeout = requestTimeout
        self.checkAccess = checkAccess
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armTimer(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefusing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let refusal = Self.check(head) ?? checkAccess(head, context.channel.remoteAddress) {
                refuse(refusal, context: context)
                return
            }
            if Self.isWebSocketUpgrade(head) {
                // Whatever the upgrade handler makes of it (a WebSocket, or a 400 and a close),
                // the connection carries no further HTTP request.
                cancelTimer()
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            requests += 1
            isReadingRequest = true
            context.fireChannelRead(data)
        case .body:
            context.fireChannelRead(data)
        case .end:
            isReadingRequest = false
            cancelTimer()
            context.fireChannelRead(data)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !isRefusing else { return }
        refuse(Self.refusal(for: parserError), context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.code >= 200:
            isResponding = true
        case .end:
            isResponding = false
            responses += 1
            if !isReadingRequest && responses >= requests { armTimer(context: context) }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    // MARK: Checks

    /// A head refused whatever it asks for: not HTTP/1.x, two `Host` headers, or both
    /// `Transfer-Encoding` and `Content-Length` (RFC 9112 6.1: such a request is a smuggling
    /// attempt; the decoder refuses it too).
    static func check(_ head: HTTPRequestHead) -> Refusal? {
        guard head.version.major == 1, head.version.minor <= 1 else {
            return Refusal(status: .badRequest, reason: "only HTTP/1.0 and HTTP/1.1 are served")
        }
        if head.headers["host"].count > 1 {
            return Refusal(status: .badRequest, reason: "more than one Host header")
        }
        if head.headers.contains(name: "transfer-encoding") && head.headers.contains(name: "content-length") {
            return Refusal(status: .badRequest, reason: "both Transfer-Encoding and Content-Length")
        }
        return nil
    }

    /// What the upgrade handler takes for a WebSocket upgrade: `websocket` among the `Upgrade`
    /// header's protocols.
    static func isWebSocketUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers["upgrade"].contains { value in
            value.split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" }.lowercased() == "websocket" }
        }
    }

    /// The answer to a request the decoder could not parse.
    static func refusal(for error: HTTPParserError) -> Refusal {
        switch error {
        case .headerOverflow: Refusal(status: .requestHeaderFieldsTooLarge, reason: "the request's header is too large")
        case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
            Refusal(status: .badRequest, reason: "a malformed request target")
        default: Refusal(status: .badRequest, reason: "a malformed request")
        }
    }

    // MARK: Answers

    private func refuse(_ refusal: Refusal, context: ChannelHandlerContext) {
        isRefusing = true
        cancelTimer()
        guard refusal.delay > .zero else {
            answer(refusal, context: context)
            return
        }
        let loop = context.eventLoop.assumeIsolated()
        loop.scheduleTask(in: refusal.delay) { self.answer(refusal, context: context) }
    }

    /// Sends the refusal (unless a response is under way: a second one would be taken for its
    /// rest) and closes the connection once it is written.
    private func answer(_ refusal: Refusal, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        guard !isResponding else {
            context.close(promise: nil)
            return
        }
        let body = context.channel.allocator.buffer(string: refusal.reason + "\n")
        var headers = HTTPHeaders()
        for field in WebResources.refusalHeaders { headers.add(name: field.name.canonicalName, value: field.value) }
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: refusal.status.code), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        written.assumeIsolated().whenComplete { _ in Self.close(context: context) }
    }

    /// Closes the connection, telling the handlers behind first that no more input comes: the
    /// upgrade handler, still waiting for a first request, then ends its wait as for a client
    /// that closed (hummingbird logs that at trace level; a channel closed under it would be
    /// logged as an error).
    private static func close(context: ChannelHandlerContext) {
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    private func armTimer(context: ChannelHandlerContext) {
        cancelTimer()
        let loop = context.eventLoop.assumeIsolated()
        timer = loop.scheduleTask(in: requestTimeout) {
            self.timer = nil
            guard !self.isRefusing else { return }
            guard self.isReadingRequest else {
                self.isRefusing = true
                Self.close(context: context)
                return
            }
            self.refuse(Refusal(status: .requestTimeout, reason: "the request did not come in time"), context: context)
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}

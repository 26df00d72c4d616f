import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import DaemonCore
@testable import WebAPI

/// ``HTTPRequestGuard`` behind NIO's real HTTP decoder and encoder, in an `EmbeddedChannel`
/// whose clock the tests move: the request timeout, and the answers to what cannot be parsed.
/// (WebSocketAPITests drive the same over TCP against the daemon.)
@Suite struct HTTPRequestGuardTests {
    /// A connected channel: the HTTP codec, the guard, and a handler that keeps what the guard passes on.
    final class Connection {
        let channel = EmbeddedChannel()
        let passedOn = PassedOn()

        final class PassedOn: ChannelInboundHandler {
            typealias InboundIn = HTTPServerRequestPart
            var parts: [HTTPServerRequestPart] = []
            func channelRead(context: ChannelHandlerContext, data: NIOAny) { parts.append(unwrapInboundIn(data)) }
        }

        init(timeout: TimeAmount = .seconds(20),
             checkAccess: @escaping @Sendable (HTTPRequestHead, SocketAddress?) -> HTTPRequestGuard.Refusal? = { _, _ in nil }) throws {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try channel.pipeline.syncOperations.addHandler(HTTPRequestGuard(requestTimeout: timeout, checkAccess: checkAccess))
            try channel.pipeline.syncOperations.addHandler(passedOn)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6680)).wait()
        }

        func send(_ text: String) throws { try channel.writeInbound(channel.allocator.buffer(string: text)) }
        func send(_ bytes: [UInt8]) throws { try channel.writeInbound(channel.allocator.buffer(bytes: bytes)) }

        /// Everything written to the client so far, as text.
        func received() throws -> String {
            var text = ""
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) { text += buffer.readString(length: buffer.readableBytes) ?? "" }
            return text
        }

        func respond() throws {
            try channel.writeOutbound(HTTPServerResponsePart.head(.init(version: .http1_1, status: .ok, headers: ["Content-Length": "0"])))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }

        func advance(_ amount: TimeAmount) { channel.embeddedEventLoop.advanceTime(by: amount) }
    }

    @Test func aSilentConnectionIsClosedAtTheTimeout() throws {
        let connection = try Connection(timeout: .seconds(2))
        connection.advance(.milliseconds(1999))
        #expect(connection.channel.isActive)
        connection.advance(.milliseconds(1))
        #expect(!connection.channel.isActive)
        #expect(try connection.received() == "", "nothing of a request came: closed without an answer")
    }

    @Test func aHeadTrickledSlowerThanTheTimeoutIsClosed() throws {
        let connection = try Connection(timeout: .seconds(2))
        for piece in ["GET / HTTP/1.1\r\n", "Host: 127.0.0.1\r\n", "X-A: 1\r\n", "X-B: 2\r\n"] {
            try connection.send(piece)
            connection.advance(.milliseconds(600))
        }
        #expect(!connection.channel.isActive, "every byte came within the timeout, the head not")
        #expect(connection.passedOn.parts.isEmpty)
    }

    @Test func aRequestInTimeIsPassedOnAndTheTimeoutStartsAgainAfterItsResponse() throws {
        let connection = try Connection(timeout: .seconds(2))
        try connection.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(connection.passedOn.parts.count == 2)
        connection.advance(.seconds(10))
        #expect(connection.channel.isActive, "no timeout while the request is answered")
        try connection.respond()
        #expect(try connection.received().hasPrefix("HTTP/1.1 200 OK"))
        connection.advance(.milliseconds(1999))
        #expect(connection.channel.isActive)
        try connection.send("GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(connection.passedOn.parts.count == 4, "a second request on the connection")
        connection.advance(.seconds(10))
        #expect(connection.channel.isActive)
        try connection.respond()
        connection.advance(.seconds(2))
        #expect(!connection.channel.isActive)
    }

    @Test func aBodyThatDoesNotComeInTimeIsAnswered408() throws {
        let connection = try Connection(timeout: .seconds(2))
        try connection.send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\nabc")
        connection.advance(.seconds(2))
        #expect(try connection.received().hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(!connection.channel.isActive)
    }

    static let malformed: [(String, [UInt8], Int)] = [
        ("an 80 KiB header", Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 80 * 1024))\r\n\r\n".utf8), 431),
        ("Transfer-Encoding and Content-Length",
         Array("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n".utf8), 400),
        ("a TLS client hello", [0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03] + Array(repeating: 0x2a, count: 32), 400),
        ("HTTP/0.9", Array("GET /\r\n\r\n".utf8), 400),
        ("HTTP/2.0", Array("GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n".utf8), 400),
        ("a control character in the target", Array("GET /\u{01} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), 400),
        ("two Host headers", Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n".utf8), 400),
    ]

    @Test(arguments: malformed.indices)
    func aMalformedRequestIsAnsweredAndClosed(_ index: Int) throws {
        let (name, bytes, status) = Self.malformed[index]
        let connection = try Connection()
        try connection.send(bytes)
        let answer = try connection.received()
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(name): \(answer.debugDescription)")
        #expect(answer.lowercased().contains("connection: close\r\n"), "\(name)")
        #expect(!connection.channel.isActive, "\(name)")
        #expect(connection.passedOn.parts.isEmpty, "\(name)")
    }

    static let upgrade = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    /// A refused upgrade gets the refusal's own status, as a page does (the upgrade handler
    /// behind would answer 400), after the refusal's delay; nothing is passed on.
    @Test func aRefusedUpgradeIsAnsweredWithItsStatusAfterItsDelay() throws {
        let connection = try Connection { head, peer in
            #expect(head.uri == "/ws" && peer?.ipAddress == "127.0.0.1")
            return HTTPRequestGuard.Refusal(status: .unauthorized, reason: "a token is required", delay: .milliseconds(300))
        }
        try connection.send(Self.upgrade)
        connection.advance(.milliseconds(299))
        #expect(try connection.received() == "")
        connection.advance(.milliseconds(1))
        let answer = try connection.received()
        #expect(answer.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(answer.debugDescription)")
        #expect(answer.hasSuffix("\r\n\r\na token is required\n"))
        #expect(answer.lowercased().contains("x-content-type-options: nosniff\r\n"))
        #expect(!connection.channel.isActive)
        #expect(connection.passedOn.parts.isEmpty)
    }

    /// An upgrade let through is the connection's last request: the guard leaves the pipeline,
    /// which then carries the WebSocket's bytes.
    @Test func anUpgradeLetThroughIsPassedOnAndTheGuardLeaves() throws {
        let connection = try Connection(timeout: .seconds(2))
        try connection.send(Self.upgrade)
        #expect(connection.passedOn.parts.count == 2)
        #expect(throws: (any Error).self) { try connection.channel.pipeline.syncOperations.handler(type: HTTPRequestGuard.self) }
        connection.advance(.seconds(10))
        #expect(connection.channel.isActive, "no request timeout on the WebSocket")
    }
}

import AsyncHTTPClient
import NIOCore
import Synchronization

/// An `HTTPClient` made at its first request rather than when its owner is made.
///
/// The daemon owns three clients (the feeds', the downloads' and the streams') and most runs use
/// none of them: making them at start-up entered AsyncHTTPClient's and swift-nio's set-up code and
/// started NIO's shared event loop threads, which then stayed resident for nothing
/// (docs/ARCHITECTURE.md's "Memory"). Shutting down is the owner's, as with `HTTPClient`, with one
/// difference: a client never made is not made to be shut down, and once ``shutdown()`` has begun
/// no client is made any more (a request after it fails with `HTTPClientError.alreadyShutdown`),
/// so the client made, if any, is shut down exactly once and none is released unshut (which
/// `HTTPClient` treats as a programming error).
///
/// Owner: `state` (a mutex); the client itself is thread-safe.
public final class LazyHTTPClient: Sendable {
    private enum State {
        case unused
        case made(HTTPClient)
        case shutDown
    }

    private let state = Mutex(State.unused)
    private let eventLoopGroup: (any EventLoopGroup)?
    private let configuration: HTTPClient.Configuration

    /// `eventLoopGroup` nil: NIO's shared group (`HTTPClient.defaultEventLoopGroup`), which is
    /// itself only started then.
    public init(eventLoopGroup: (any EventLoopGroup)? = nil, configuration: HTTPClient.Configuration) {
        self.eventLoopGroup = eventLoopGroup
        self.configuration = configuration
    }

    /// Whether a request has made the client (and ``shutdown()`` has not yet begun).
    public var isMade: Bool {
        state.withLock { if case .made = $0 { true } else { false } }
    }

    /// The client, made now if this is the first request.
    /// Throws `HTTPClientError.alreadyShutdown` once ``shutdown()`` has begun.
    public func client() throws -> HTTPClient {
        try state.withLock { state in
            switch state {
            case .made(let client):
                return client
            case .shutDown:
                throw HTTPClientError.alreadyShutdown
            case .unused:
                let client = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup ?? HTTPClient.defaultEventLoopGroup),
                                        configuration: configuration)
                state = .made(client)
                return client
            }
        }
    }

    /// Shuts the client down if one was made (its connections end, its requests fail); a second
    /// call does nothing.
    public func shutdown() async throws {
        let made: HTTPClient? = state.withLock { state in
            defer { state = .shutDown }
            if case .made(let client) = state { return client }
            return nil
        }
        try await made?.shutdown()
    }
}

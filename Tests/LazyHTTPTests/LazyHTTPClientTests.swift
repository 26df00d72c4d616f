import AsyncHTTPClient
import LazyHTTP
import NIOCore
import NIOPosix
import Testing

/// The client the daemon's feeds, downloads and streams share the shape of: made at the first
/// request, shut down once if made, never made after its shutdown has begun. (A daemon stopped
/// before it fetched anything once crashed here.)
@Suite struct LazyHTTPClientTests {
    @Test func aClientNeverUsedIsNeverMadeAndItsShutdownDoesNothing() async throws {
        let lazy = LazyHTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .init())
        #expect(!lazy.isMade)
        try await lazy.shutdown()
        #expect(!lazy.isMade)
        try await lazy.shutdown()
    }

    @Test func aClientMadeIsShutDownExactlyOnce() async throws {
        let lazy = LazyHTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .init())
        let made = try lazy.client()
        #expect(lazy.isMade)
        #expect(try lazy.client() === made)
        // A real request through it: to a port that was just closed (refused, and retried until
        // its deadline).
        let port = try await Self.closedPort()
        await #expect(throws: (any Error).self) {
            _ = try await made.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"), timeout: .milliseconds(300))
        }
        try await lazy.shutdown()
        try await lazy.shutdown()
        #expect(!lazy.isMade)
        // Shut down by the first call only: another shutdown of the client itself is refused.
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await made.shutdown() }
    }

    @Test func noClientIsMadeOnceTheShutdownHasBegun() async throws {
        let lazy = LazyHTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .init())
        try await lazy.shutdown()
        #expect(throws: HTTPClientError.alreadyShutdown) { _ = try lazy.client() }
        #expect(!lazy.isMade)
    }

    @Test func withoutAGroupTheClientRunsOnTheSharedOne() async throws {
        let lazy = LazyHTTPClient(configuration: .init())
        let made = try lazy.client()
        #expect(made.eventLoopGroup === HTTPClient.defaultEventLoopGroup)
        try await lazy.shutdown()
    }

    /// A local port nobody listens on any more.
    private static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}

import Foundation
import TestSupport
import Testing

/// A crowd of idle local clients: the daemon serves at most `--max-clients` of them. (When the
/// crowd takes every descriptor the daemon's process has: IntegrationTests' suite of the same name.)
@Suite(.serialized) struct ControlSocketCrowdTests {
    @Test func aClientOverMaxClientsIsClosedAtOnceAndTheLogSaysSo() throws {
        let daemon = try InProcessDaemon {
            $0.musicDirectory = TestMedia.directory.path
            $0.maxClients = 5
        }
        defer { daemon.stop() }
        var admitted = try (0..<5).map { _ in try daemon.client() }
        // The sixth is closed without a greeting; the five still answer.
        let refused = try UnixSocketClient(path: daemon.socket)
        let end = refused.waitForEndOfFile(timeout: 5)
        #expect(end.closed && end.received.isEmpty, "the sixth client got \(end)")
        refused.close()
        #expect(waitUntil(timeout: 5) { daemon.standardError.contains("5 clients connected, the most allowed (--max-clients): refused 1 new client") })
        for client in admitted { #expect(try client.request("ping") == ["OK"]) }
        // A place given back is a place for the next client.
        admitted.removeLast().close()
        let next = try #require(waitForGreetedClient(daemon.socket, timeout: 5))
        #expect(try next.request("ping") == ["OK"])
        for client in admitted + [next] { client.close() }
    }
}

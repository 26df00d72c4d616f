import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The socket file's safety: a stale socket file is replaced. (The rest: IntegrationTests'
/// suite of the same name.)
@Suite(.serialized) struct ControlSocketSafetyTests {
    @Test func aStaleSocketFileIsReplaced() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stale.sock").path
        try UnixSocketClient.makeStaleSocketFile(at: path)
        try #require(SocketFile.mode(path)?.isSocket == true, "the stale socket file was not made")
        #expect((try? UnixSocketClient(path: path)) == nil, "nothing listens on the stale socket")

        let daemon = try InProcessDaemon(socket: path) { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        SocketFile.expectPrivate(path)
        let client = try daemon.client()
        #expect(try client.request("ping") == ["OK"])
        #expect(daemon.isRunning, "stderr: \(daemon.standardError)")
    }
}

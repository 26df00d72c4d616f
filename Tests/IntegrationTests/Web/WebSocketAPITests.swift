import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The WebSocket API (docs/websocket.md) where the daemon's process is the point: its
/// exit status for a bad `--http`, and SIGTERM. The rest: DaemonInProcessTests' suite of the same name.
@Suite(.serialized) struct WebSocketAPITests {
    @Test func anAddressOtherThanLoopbackNeedsAToken() throws {
        let run = try ToolRun.run(ChildProcess.daemonPath, ["--http", "0.0.0.0:0", "--output", "null", "--no-state"], timeout: 10)
        #expect(run.status == 64, "\(run)")
        #expect(run.stderr.contains("--http-token-file"), "\(run.stderr)")
        let bad = try ToolRun.run(ChildProcess.daemonPath, ["--http", "example.org:80", "--output", "null", "--no-state"], timeout: 10)
        #expect(bad.status == 64 && bad.stderr.contains("not a host name"), "\(bad)")
    }

    @Test func aTokenShorterThanSixteenBytesStopsTheDaemonAtStart() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        try "x\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let run = try ToolRun.run(ChildProcess.daemonPath, ["--http", "0.0.0.0:0", "--http-token-file", tokenFile.path, "--output", "null",
                                                            "--no-state", "--socket", directory.appendingPathComponent("s.sock").path],
                                  timeout: 10)
        #expect(run.status == 64, "\(run)")
        #expect(run.stderr.contains("the token is 1 bytes long; it must be at least 16"), "\(run.stderr)")
    }

    @Test func aPortInUseIsAClearError() throws {
        let holder = try WebDaemon()
        defer { holder.stop() }
        let port = String(holder.base.split(separator: ":").last ?? "")
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try ToolRun.run(ChildProcess.daemonPath, ["--http", "127.0.0.1:\(port)", "--output", "null", "--no-state",
                                                            "--socket", directory.appendingPathComponent("s.sock").path], timeout: 20)
        #expect(run.status != 0 && run.status != nil, "\(run)")
        #expect(run.stderr.contains("127.0.0.1:\(port): the address is already in use"), "\(run.stderr)")
        #expect(holder.process.isRunning)
    }

    @Test func sigtermClosesWebSocketsAndTheDaemonExitsPromptly() throws {
        let daemon = try WebDaemon()
        defer { daemon.stop() }
        let path = TestMedia.integrationTests.appendingPathComponent("Scripts/ws_api.py").path
        let client = try ChildProcess(program: "/usr/bin/python3", [path, daemon.base, "hold", "20"])
        defer { client.terminate() }
        #expect(client.waitForLine(timeout: 10) { $0.contains("\"open\"") } != nil)
        let sentAt = ChildProcess.now()
        daemon.process.send(SIGTERM)
        let status = daemon.process.wait(timeout: 10)
        let seconds = ChildProcess.now() - sentAt
        #expect(status == 0, "exit status")
        #expect(seconds < 3, "exited after \(seconds) s")
        let closed = client.waitForLine(timeout: 5) { $0.contains("\"closed\"") }
        #expect(closed?.text.contains("1000") == true || closed?.text.contains("1001") == true, "\(String(describing: closed?.text))")
    }
}

import Foundation
import TestSupport
import Testing

/// The daemon started by `systemd-socket-activate`, as the socket unit would: it
/// serves the socket it is handed on fd 3 instead of binding its own.
@Suite(.serialized) struct SocketActivationTests {
    @Test func theDaemonServesThePassedSocket() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("activated.sock").path
        let ownSocket = directory.appendingPathComponent("never-bound.sock").path
        let activator = try ChildProcess(
            program: "/usr/bin/systemd-socket-activate",
            ["-l", socket, ChildProcess.daemonPath, "--music-directory", TestMedia.directory.path,
             "--output", "null", "--socket", ownSocket])
        defer { activator.terminate() }
        let deadline = ChildProcess.now() + 5
        while !FileManager.default.fileExists(atPath: socket) && ChildProcess.now() < deadline { usleep(10_000) }

        // The first client starts the daemon.
        let mpc = try ChildProcess(program: "/usr/bin/mpc", ["status"], environment: ["MPD_HOST": socket])
        #expect(mpc.wait(timeout: 10) == 0, "mpc: \(mpc.standardError) / activator: \(activator.standardError)")
        #expect(mpc.lines.map(\.text) == ["volume:100%   repeat: off   random: off   single: off   consume: off"])
        #expect(activator.standardError.contains("the socket passed by systemd"))
        #expect(!FileManager.default.fileExists(atPath: ownSocket), "the daemon must not bind a socket of its own")
    }
}

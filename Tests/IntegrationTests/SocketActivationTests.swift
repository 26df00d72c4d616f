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
        // systemd-socket-activate clears the environment of what it starts: the daemon's
        // private home and XDG directories must be passed on by name (`-E`), or it would read
        // and write the user's own (found by a test run on a machine where the daemon had run).
        let state = directory.appendingPathComponent("state")
        let passOn = ChildProcess.userDirectoryVariables.flatMap { ["-E", $0] }
        let activator = try ChildProcess(
            program: "/usr/bin/systemd-socket-activate",
            ["-l", socket] + passOn + [ChildProcess.daemonPath, "--music-directory", TestMedia.directory.path,
             "--output", "null", "--socket", ownSocket],
            environment: ["XDG_STATE_HOME": state.path])
        defer { activator.terminate() }
        _ = waitUntil(timeout: 5) { FileManager.default.fileExists(atPath: socket) }

        // The first client starts the daemon.
        let mpc = try ChildProcess(program: "/usr/bin/mpc", ["status"], environment: ["MPD_HOST": socket])
        #expect(mpc.wait(timeout: 10) == 0, "mpc: \(mpc.standardError) / activator: \(activator.standardError)")
        #expect(mpc.lines.map(\.text) == ["volume:100%   repeat: off   random: off   single: off   consume: off"])
        // The log line comes through its own pipe and may arrive after mpc's reply.
        #expect(waitUntil(timeout: 5) { activator.standardError.contains("the socket passed by systemd") },
                "\(activator.standardError)")
        #expect(!FileManager.default.fileExists(atPath: ownSocket), "the daemon must not bind a socket of its own")

        // It keeps its song database in the state directory it was given, not in the user's.
        let database = state.appendingPathComponent("queueplayerd/database.json").path
        let saved = waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: database) }
        #expect(saved, "no \(database): the daemon did not get the test's XDG_STATE_HOME")
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

    /// A socket unit with a TCP `ListenStream=` too: both sockets are passed
    /// (`LISTEN_FDS=2`), the daemon serves each, and binds none of its own.
    @Test func aTCPSocketIsPassedAndServedBesideTheUnixOne() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("activated.sock").path
        let port = try Self.freePort()
        let passOn = ChildProcess.userDirectoryVariables.flatMap { ["-E", $0] }
        let activator = try ChildProcess(
            program: "/usr/bin/systemd-socket-activate",
            ["-l", socket, "-l", "127.0.0.1:\(port)"] + passOn
                + [ChildProcess.daemonPath, "--music-directory", TestMedia.directory.path, "--output", "null", "--no-state",
                   "--bind", "127.0.0.1:0"])
        defer { activator.terminate() }
        _ = waitUntil(timeout: 5) { FileManager.default.fileExists(atPath: socket) }

        // The first client, over TCP, starts the daemon.
        let overTCP = try ChildProcess(program: "/usr/bin/mpc", ["-h", "127.0.0.1", "-p", String(port), "status"])
        #expect(overTCP.wait(timeout: 10) == 0, "mpc: \(overTCP.standardError) / activator: \(activator.standardError)")
        #expect(overTCP.lines.map(\.text) == ["volume:100%   repeat: off   random: off   single: off   consume: off"])
        let onSocket = try ChildProcess(program: "/usr/bin/mpc", ["status"], environment: ["MPD_HOST": socket])
        #expect(onSocket.wait(timeout: 10) == 0, "mpc: \(onSocket.standardError)")
        #expect(waitUntil(timeout: 5) { activator.standardError.contains("control socket: 127.0.0.1:\(port) (passed by systemd, fd 4)") },
                "\(activator.standardError)")
        // `--bind 127.0.0.1:0` was not bound: the passed sockets replace the daemon's own.
        #expect(activator.standardError.components(separatedBy: "control socket: ").count - 1 == 2, "\(activator.standardError)")
    }

    /// A TCP port nobody listens on now (the kernel's choice, released at once).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard found else { throw UnixSocketError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

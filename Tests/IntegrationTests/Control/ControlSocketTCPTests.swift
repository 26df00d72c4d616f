import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Remote control as mpd allows it: TCP listeners with mpc and python-mpd2, and shell
/// one-liners that half-close the socket after their commands. (With raw clients:
/// DaemonInProcessTests' suite of the same name.)
@Suite(.serialized) struct ControlSocketTCPTests {
    /// A daemon with `--bind HOST:0` too: the TCP port the kernel picked, as the log names it.
    final class TCPDaemon {
        let control: ControlDaemon
        let host: String
        let port: Int

        init(bind: String = "127.0.0.1:0", _ extra: [String] = []) throws {
            control = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state", "--bind", bind] + extra)
            let (host, prefix) = NetworkProbe.shown(bind: bind)
            let deadline = ChildProcess.now() + 10
            var found: Int?
            while found == nil && ChildProcess.now() < deadline {
                found = NetworkProbe.port(in: control.process.standardError, after: prefix)
                if found == nil { _ = poll(nil, 0, 20) }
            }
            guard let found else {
                let stderr = control.process.standardError
                control.stop()
                throw UnixSocketError("the daemon named no TCP listener within 10 s; stderr: \(stderr)")
            }
            self.host = host
            port = found
        }

        func stop() { control.stop() }

        /// `/usr/bin/mpc` over TCP; `password` as mpc takes it (`-h PASSWORD@HOST`).
        func mpc(_ arguments: [String], password: String? = nil) throws -> ToolRun {
            let hostArgument = password.map { "\($0)@\(host)" } ?? host
            return try ToolRun.run("/usr/bin/mpc", ["-h", hostArgument, "-p", String(port)] + arguments, timeout: 10)
        }
    }

    /// `printf TEXT | socat -t 5 - ADDRESS`: socat half-closes the socket at the end of its input,
    /// then prints what comes back until the daemon closes.
    static func socat(_ text: String, to address: String) throws -> ToolRun {
        let quoted = text.replacingOccurrences(of: "\n", with: "\\n")
        return try ToolRun.run("/bin/sh", ["-c", "printf '\(quoted)' | /usr/bin/socat -t 5 - \(address)"], timeout: 15)
    }

    @Test func aOneLinerThroughSocatGetsItsAnswerOnTheUnixSocketAndOverTCP() throws {
        let daemon = try TCPDaemon()
        defer { daemon.stop() }
        for address in ["UNIX-CONNECT:\(daemon.control.socket)", "TCP:127.0.0.1:\(daemon.port)"] {
            let started = ChildProcess.now()
            let one = try Self.socat("status\n", to: address)
            #expect(one.status == 0, "\(one)")
            #expect(one.stdout.first == "OK MPD 0.23.5")
            #expect(one.stdout.contains { $0.hasPrefix("volume: ") } && one.stdout.last == "OK", "\(one)")
            // The daemon closes once it has answered: socat does not wait out its timeout.
            #expect(ChildProcess.now() - started < 4)

            let batch = try Self.socat("setvol 30\nstatus\ncurrentsong\nping\n", to: address)
            #expect(batch.stdout.filter { $0 == "OK" }.count == 4, "\(batch)")
            #expect(batch.stdout.contains("volume: 30"), "\(batch)")
            // A command list left open at the end of input is dropped, as mpd drops it.
            let open = try Self.socat("command_list_begin\nsetvol 90\n", to: address)
            #expect(open.stdout == ["OK MPD 0.23.5"], "\(open)")
        }
        let after = try daemon.mpc(["volume"])
        #expect(after.stdout == ["volume: 30%"], "\(after)")
    }

    @Test func mpcOverTCPWithoutAPasswordDoesWhatItDoesOnTheSocket() throws {
        let daemon = try TCPDaemon()
        defer { daemon.stop() }
        expectSuccess(try daemon.mpc(["add", "01-morning-sine.mp3"]), stdout: [])
        let playlist = try daemon.mpc(["playlist"])
        #expect(playlist.status == 0 && playlist.stdout.count == 1, "\(playlist)")
        let volume = try daemon.mpc(["volume", "55"])
        #expect(volume.status == 0 && volume.stdout.contains("volume: 55%   repeat: off   random: off   single: off   consume: off"), "\(volume)")
    }

    @Test(.enabled(if: NetworkProbe.hasIPv6Loopback, "::1 cannot be bound here"))
    func overIPv6Loopback() throws {
        let daemon = try TCPDaemon(bind: "[::1]:0")
        defer { daemon.stop() }
        let status = try daemon.mpc(["status"])
        #expect(status.status == 0 && status.stdout.last?.hasPrefix("volume:") == true, "\(status)")
    }

    @Test func mpcWithAndWithoutAPassword() throws {
        let daemon = try TCPDaemon(["--password", "s3cret@read,add,player,control,admin"])
        defer { daemon.stop() }
        let refused = try daemon.mpc(["status"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("you don't have permission for \"status\""), "\(refused)")
        let wrong = try daemon.mpc(["status"], password: "guess")
        #expect(wrong.status == 1 && wrong.stderr.contains("incorrect password"), "\(wrong)")
        let granted = try daemon.mpc(["volume", "20"], password: "s3cret")
        #expect(granted.status == 0 && granted.stdout.last?.hasPrefix("volume: 20%") == true, "\(granted)")
        // The password is never logged; the failure is, with the peer.
        let log = daemon.control.process.standardError
        #expect(!log.contains("s3cret") && !log.contains("guess"))
        #expect(log.contains("wrong password from 127.0.0.1"))
    }

    static let permissionsScript = TestMedia.integrationTests
        .appendingPathComponent("Scripts/mpd2_permissions.py")
    static let permissionNames = ["read", "add", "player", "control", "admin"]

    /// Over 127.0.0.1 and ::1: each permission refused without a password, then granted by one.
    @Test(arguments: ["127.0.0.1", "::1"])
    func pythonMPD2RefusedAndGrantedEachPermission(host: String) throws {
        if host == "::1" { guard NetworkProbe.hasIPv6Loopback else { return } }
        let daemon = try TCPDaemon(bind: host.contains(":") ? "[\(host)]:0" : "\(host):0",
                                   ["--password", "reader@read", "--password", "full@read,add,player,control,admin"])
        defer { daemon.stop() }
        let run = try ToolRun.run("/usr/bin/python3", [Self.permissionsScript.path, host, String(daemon.port)], timeout: 30)
        #expect(run.status == 0, "\(run)")
        let steps = ControlSocketPythonTests.Steps(run.stdout)
        for name in Self.permissionNames {
            #expect(steps.results["none.\(name)"]?.error?.contains("you don't have permission") == true, "none.\(name): \(run)")
            #expect(steps.results["full.\(name)"]?.error == nil, "full.\(name): \(run)")
            if name == "read" {
                #expect(steps.results["reader.read"]?.error == nil, "\(run)")
            } else {
                #expect(steps.results["reader.\(name)"]?.error?.contains("you don't have permission") == true, "reader.\(name): \(run)")
            }
        }
        #expect(steps.results["wrong.password"]?.error?.contains("incorrect password") == true, "\(run)")
        #expect((steps.ok("none.commands") as? [String])?.contains("password") == true)
        #expect((steps.ok("none.commands") as? [String])?.contains("status") == false)
        #expect((steps.ok("reader.notcommands") as? [String])?.contains("setvol") == true)
        #expect((steps.ok("full.notcommands") as? [String]) == [])
        #expect(!daemon.control.process.standardError.contains("guess"))
    }

    /// Without a password a loopback client (here ::1) may do everything, no `password` sent.
    @Test(.enabled(if: NetworkProbe.hasIPv6Loopback, "::1 cannot be bound here"))
    func pythonMPD2OverIPv6LoopbackWithoutAPassword() throws {
        let daemon = try TCPDaemon(bind: "[::1]:0")
        defer { daemon.stop() }
        let run = try ToolRun.run("/usr/bin/python3", [Self.permissionsScript.path, "::1", String(daemon.port), "open"], timeout: 30)
        #expect(run.status == 0, "\(run)")
        let steps = ControlSocketPythonTests.Steps(run.stdout)
        for name in Self.permissionNames {
            #expect(steps.results["open.\(name)"]?.error == nil, "open.\(name): \(run)")
        }
        #expect((steps.ok("open.notcommands") as? [String]) == [])
        _ = steps.ok("cleanup")
    }
}

import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Remote control as mpd allows it (issue 34): TCP listeners with mpc and python-mpd2, passwords
/// and permissions, and shell one-liners that half-close the socket after their commands.
@Suite(.serialized) struct ControlSocketTCPTests {
    /// A daemon with `--bind HOST:0` too: the TCP port the kernel picked, as the log names it.
    final class TCPDaemon {
        let control: ControlDaemon
        let host: String
        let port: Int

        init(bind: String = "127.0.0.1:0", _ extra: [String] = []) throws {
            control = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state", "--bind", bind] + extra)
            let shown = bind.hasPrefix("[") ? String(bind[..<bind.firstIndex(of: "]")!]) + "]:" : String(bind.split(separator: ":")[0]) + ":"
            let deadline = ChildProcess.now() + 10
            var found: Int?
            while found == nil && ChildProcess.now() < deadline {
                found = Self.port(in: control.process.standardError, after: "control socket: " + shown)
                if found == nil { _ = poll(nil, 0, 20) }
            }
            guard let found else {
                let stderr = control.process.standardError
                control.stop()
                throw UnixSocketError("the daemon named no TCP listener within 10 s; stderr: \(stderr)")
            }
            host = bind.hasPrefix("[") ? String(shown.dropFirst().dropLast(2)) : String(shown.dropLast())
            port = found
        }

        static func port(in log: String, after prefix: String) -> Int? {
            guard let range = log.range(of: prefix) else { return nil }
            return Int(log[range.upperBound...].prefix { $0.isNumber })
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

    /// `config` names where the music is on this machine: a client on the Unix socket gets it,
    /// a TCP client is refused with mpd 0.23's words even from loopback with every permission.
    @Test func configOnlyOnTheUnixSocket() throws {
        let daemon = try TCPDaemon()
        defer { daemon.stop() }
        let local = try daemon.control.client()
        #expect(try local.request("config") == ["music_directory: \(TestMedia.directory.path)", "OK"])
        let remote = try UnixSocketClient(host: "127.0.0.1", port: daemon.port)
        #expect(try remote.readLine() == "OK MPD 0.23.5")
        #expect(try remote.request("notcommands") == ["OK"], "every permission, config included")
        #expect(try remote.request("config") == ["ACK [4@0] {config} Command only permitted to local clients"])
        #expect(try remote.request("ping") == ["OK"])
    }

    /// Whether this machine can bind `::1` (one without IPv6 on its loopback cannot: nothing
    /// to test over IPv6 there).
    static var hasIPv6Loopback: Bool {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        close(probe)
        return bound == 0
    }

    /// The first IPv4 address of this machine that is not loopback (eth0's, say): a client
    /// that connects to it comes from it, as a client from another machine would (not from
    /// loopback). Nil on a machine with none.
    static var nonLoopbackIPv4: String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                  current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0,
                  current.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count),
                              nil, 0, NI_NUMERICHOST) == 0 else { continue }
            return String(cString: host)
        }
        return nil
    }

    /// A raw TCP client, its greeting read.
    static func greeted(_ host: String, _ port: Int) throws -> UnixSocketClient {
        let client = try UnixSocketClient(host: host, port: port)
        let greeting = try client.readLine()
        guard greeting == "OK MPD 0.23.5" else { throw UnixSocketError("\(host):\(port) greeted \(String(describing: greeting))") }
        return client
    }

    @Test(.enabled(if: ControlSocketTCPTests.hasIPv6Loopback, "::1 cannot be bound here"))
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

    static let permissionsScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Scripts/mpd2_permissions.py")
    static let permissionNames = ["read", "add", "player", "control", "admin"]

    /// Over 127.0.0.1 and ::1: each permission refused without a password, then granted by one.
    @Test(arguments: ["127.0.0.1", "::1"])
    func pythonMPD2RefusedAndGrantedEachPermission(host: String) throws {
        if host == "::1" { guard Self.hasIPv6Loopback else { return } }
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
    @Test(.enabled(if: ControlSocketTCPTests.hasIPv6Loopback, "::1 cannot be bound here"))
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

    /// Safe by default: bound beyond loopback with no password, a client from another address
    /// of this machine (as one from another machine) may only read, refused the rest in mpd's
    /// words, while a loopback client may do everything; the log says how to change it.
    @Test(.enabled(if: ControlSocketTCPTests.nonLoopbackIPv4 != nil, "this machine has no IPv4 address but loopback"))
    func aNonLoopbackBindWithoutAPasswordGivesOtherMachinesReadOnly() throws {
        let address = try #require(Self.nonLoopbackIPv4)
        // Not published by Zeroconf: the machine's network must not see a test's daemon.
        let daemon = try TCPDaemon(bind: "0.0.0.0:0", ["--no-zeroconf"])
        defer { daemon.stop() }
        let remote = try Self.greeted(address, daemon.port)
        #expect(try remote.request("status").last == "OK")
        #expect(try remote.request("add \"01-morning-sine.mp3\"") == ["ACK [4@0] {add} you don't have permission for \"add\""])
        #expect(try remote.request("setvol 10") == ["ACK [4@0] {setvol} you don't have permission for \"setvol\""])
        let refused = try remote.request("notcommands")
        #expect(refused.contains("command: add") && refused.contains("command: setvol") && !refused.contains("command: status"),
                "\(refused)")
        let loopback = try Self.greeted("127.0.0.1", daemon.port)
        #expect(try loopback.request("add \"01-morning-sine.mp3\"") == ["OK"])
        #expect(try loopback.request("notcommands") == ["OK"])
        let log = daemon.control.process.standardError
        #expect(log.contains("clients from other machines may only read (no password is set): give --password SECRET@PERMISSIONS"),
                "\(log)")
        #expect(log.contains("--default-permissions read,add,player,control,admin to trust the network"), "\(log)")
    }

    /// Guessing a password: after three failures a peer's wrong answers are held back (1 s, then
    /// longer), and the log says so; the right password is never refused, from the guessing
    /// connection either, and another local user, from the same 127.0.0.1, is neither refused
    /// nor slowed. Nothing a client sent as a password is ever in the log.
    @Test func failedPasswordsAreSlowedPerPeerNeverRefusedAndLoggedWithoutThem() throws {
        let secret = "Corr3ct-Horse"
        let daemon = try TCPDaemon(bind: "0.0.0.0:0", ["--no-zeroconf", "--password", "\(secret)@read,add,player,control,admin"])
        defer { daemon.stop() }
        let guesser = try Self.greeted("127.0.0.1", daemon.port)
        for attempt in 1...3 {
            #expect(try guesser.request("password guess-\(attempt)") == ["ACK [3@0] {password} incorrect password"])
        }
        let sentAt = ChildProcess.now()
        #expect(try guesser.request("password guess-4") == ["ACK [3@0] {password} incorrect password"])
        let answeredAfter = ChildProcess.now() - sentAt
        #expect(answeredAfter >= 0.9, "the fourth wrong answer came \(answeredAfter) s after it was sent")
        // Another local user, from the same address: its first try is answered as ever.
        let owner = try Self.greeted("127.0.0.1", daemon.port)
        #expect(try owner.request("password \(secret)") == ["OK"])
        #expect(try owner.request("status").last == "OK")
        // Another peer (another address, here of this machine) is not held up either.
        if let address = Self.nonLoopbackIPv4 {
            let other = try Self.greeted(address, daemon.port)
            #expect(try other.request("password \(secret)") == ["OK"])
            #expect(try other.request("status").last == "OK")
        }
        // The right password from the guesser itself: accepted, the first time.
        #expect(try guesser.request("password \(secret)") == ["OK"])
        #expect(try guesser.request("status").last == "OK")

        let log = daemon.control.process.standardError
        #expect(log.contains("wrong password from 127.0.0.1 (3 failed attempts)"), "\(log)")
        #expect(log.contains("wrong password from 127.0.0.1 (4 failed attempts; answered after 1 s)"), "\(log)")
        #expect(log.contains("password accepted from 127.0.0.1"), "\(log)")
        #expect(!log.contains(secret) && !log.contains("guess-"), "\(log)")
    }

    /// The owner is never locked out: while a local guesser sends a wrong password every 20 ms,
    /// each on a new connection from 127.0.0.1 (some over the WebSocket would count the same),
    /// every one of 30 logins of the owner with the right password is accepted.
    @Test func aGuesserPollingFromLoopbackNeverLocksTheOwnerOut() throws {
        let secret = "s3cret"
        let daemon = try TCPDaemon(["--password", "\(secret)@read,add,player,control,admin"])
        defer { daemon.stop() }
        let port = daemon.port
        let stop = Atomic<Bool>(false)
        let guesses = Atomic<Int>(0)
        let guessing = DispatchGroup()
        DispatchQueue.global().async(group: guessing) {
            while !stop.load(ordering: .relaxed) {
                if let client = try? Self.greeted("127.0.0.1", port), (try? client.send("password guess\n")) != nil {
                    guesses.add(1, ordering: .relaxed)
                    client.close()
                }
                usleep(20_000)
            }
        }
        var answers: [[String]] = []
        for _ in 0..<30 {
            let owner = try Self.greeted("127.0.0.1", port)
            answers.append(try owner.request("password \(secret)", timeout: 10))
            owner.close()
            usleep(20_000)
        }
        stop.store(true, ordering: .relaxed)
        guessing.wait()
        #expect(guesses.load(ordering: .relaxed) >= 30, "the guesser sent \(guesses.load(ordering: .relaxed)) guesses")
        #expect(answers.filter { $0 != ["OK"] }.isEmpty, "\(answers.filter { $0 != ["OK"] }.count) of 30 refused: \(answers)")
    }

    /// `--connection-timeout` (mpd's `connection_timeout`): silent TCP clients that hold every
    /// place of `--max-clients` still leave one to the Unix socket's owner, and are closed after
    /// the timeout, never before (one that sends a byte every 0.3 s but never a whole line too);
    /// the owner's client is closed too once it falls silent, and new clients are served.
    @Test func silentClientsAreClosedAfterTheConnectionTimeoutAndTheOwnerIsServedMeanwhile() throws {
        let daemon = try TCPDaemon(["--max-clients", "4", "--connection-timeout", "1"])
        defer { daemon.stop() }
        let connectedAt = ChildProcess.now()
        let crowd = try (0..<4).map { _ in try Self.greeted(daemon.host, daemon.port) }
        let refused = try UnixSocketClient(host: daemon.host, port: daemon.port)
        let refusal = refused.waitForEndOfFile(timeout: 5)
        #expect(refusal.closed && refusal.received.isEmpty, "a fifth TCP client got \(refusal)")
        refused.close()
        let owner = try daemon.control.client()
        #expect(try owner.request("ping") == ["OK"], "the owner is served while TCP clients hold every place")

        // The first of the crowd trickles bytes; the others say nothing.
        let deadline = connectedAt + 15
        var trickled = 0
        var trickler = (closed: false, received: [UInt8]())
        while !trickler.closed && ChildProcess.now() < deadline {
            if (try? crowd[0].send("p")) != nil { trickled += 1 }
            trickler = crowd[0].waitForEndOfFile(timeout: 0.3)
        }
        let tricklerClosedAt = ChildProcess.now()
        #expect(trickler.closed && trickler.received.isEmpty, "the trickling client (\(trickled) bytes sent): \(trickler)")
        #expect(tricklerClosedAt - connectedAt >= 0.9, "closed \(tricklerClosedAt - connectedAt) s after connecting")
        for (index, client) in crowd.enumerated().dropFirst() {
            let end = client.waitForEndOfFile(timeout: max(0.1, deadline - ChildProcess.now()))
            #expect(end.closed && end.received.isEmpty, "silent client \(index): \(end)")
        }
        let ownerEnd = owner.waitForEndOfFile(timeout: max(0.1, deadline - ChildProcess.now()))
        #expect(ownerEnd.closed, "the owner's client, silent since its ping: \(ownerEnd)")

        // Their places are free: new clients are served.
        var next: UnixSocketClient?
        #expect(waitUntil(timeout: 5) {
            next = try? Self.greeted(daemon.host, daemon.port)
            return next != nil
        })
        #expect(try next?.request("ping") == ["OK"])
        for client in crowd + [owner] { client.close() }
    }

    /// `--max-clients` counts every listener together: with N = 3, a client on each of the
    /// Unix socket, TCP over IPv4 and TCP over IPv6 fills it; a fourth on any is closed at
    /// once without a greeting, and a place given back on one is taken on another.
    @Test(.enabled(if: ControlSocketTCPTests.hasIPv6Loopback, "::1 cannot be bound here"))
    func maxClientsCountsEveryListener() throws {
        let control = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state", "--max-clients", "3",
                                         "--bind", "127.0.0.1:0", "--bind", "[::1]:0"])
        defer { control.stop() }
        var ports: (v4: Int?, v6: Int?)
        #expect(waitUntil(timeout: 10) {
            let log = control.process.standardError
            ports = (TCPDaemon.port(in: log, after: "control socket: 127.0.0.1:"), TCPDaemon.port(in: log, after: "control socket: [::1]:"))
            return ports.v4 != nil && ports.v6 != nil
        }, "\(control.process.standardError)")
        let (v4, v6) = (try #require(ports.v4), try #require(ports.v6))
        let unix = try control.client()
        let ipv4 = try Self.greeted("127.0.0.1", v4)
        let ipv6 = try Self.greeted("::1", v6)
        for connect in [{ try UnixSocketClient(path: control.socket) }, { try UnixSocketClient(host: "127.0.0.1", port: v4) },
                        { try UnixSocketClient(host: "::1", port: v6) }] {
            let refused = try connect()
            let end = refused.waitForEndOfFile(timeout: 5)
            #expect(end.closed && end.received.isEmpty, "\(refused.path): the fourth client got \(end)")
            refused.close()
        }
        for client in [unix, ipv4, ipv6] { #expect(try client.request("ping") == ["OK"]) }
        #expect(waitUntil(timeout: 5) {
            control.process.standardError.contains("3 clients connected, the most allowed (--max-clients): refused")
        })
        // The Unix client leaves: its place is taken over IPv6 (once the daemon has seen it go).
        unix.close()
        var next: UnixSocketClient?
        #expect(waitUntil(timeout: 5) {
            next = try? Self.greeted("::1", v6)
            return next != nil
        })
        #expect(try next?.request("ping") == ["OK"])
        for client in [ipv4, ipv6] { #expect(try client.request("ping") == ["OK"]) }
    }
}

import DaemonCore
import Foundation
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Remote control as mpd allows it: TCP listeners with raw clients, passwords and
/// permissions, the connection timeout and the limit on clients. (With mpc, python-mpd2 and
/// shell one-liners: IntegrationTests' suite of the same name.)
@Suite(.serialized) struct ControlSocketTCPTests {
    /// `config` names where the music is on this machine: a client on the Unix socket gets it,
    /// a TCP client is refused with mpd 0.23's words even from loopback with every permission.
    @Test func configOnlyOnTheUnixSocket() throws {
        let daemon = try InProcessTCPDaemon()
        defer { daemon.stop() }
        let local = try daemon.control.client()
        #expect(try local.request("config") == ["music_directory: \(TestMedia.directory.path)", "OK"])
        let remote = try UnixSocketClient(host: "127.0.0.1", port: daemon.port)
        #expect(try remote.readLine() == "OK MPD 0.23.5")
        #expect(try remote.request("notcommands") == ["OK"], "every permission, config included")
        #expect(try remote.request("config") == ["ACK [4@0] {config} Command only permitted to local clients"])
        #expect(try remote.request("ping") == ["OK"])
    }

    /// Safe by default: bound beyond loopback with no password, a client from another address
    /// of this machine (as one from another machine) may only read, refused the rest in mpd's
    /// words, while a loopback client may do everything; the log says how to change it.
    @Test(.enabled(if: NetworkProbe.nonLoopbackIPv4 != nil, "this machine has no IPv4 address but loopback"))
    func aNonLoopbackBindWithoutAPasswordGivesOtherMachinesReadOnly() throws {
        let address = try #require(NetworkProbe.nonLoopbackIPv4)
        // Not published by Zeroconf: the machine's network must not see a test's daemon.
        let daemon = try InProcessTCPDaemon(bind: "0.0.0.0:0") { $0.zeroconf = false }
        defer { daemon.stop() }
        let remote = try NetworkProbe.greeted(address, daemon.port)
        #expect(try remote.request("status").last == "OK")
        #expect(try remote.request("add \"01-morning-sine.mp3\"") == ["ACK [4@0] {add} you don't have permission for \"add\""])
        #expect(try remote.request("setvol 10") == ["ACK [4@0] {setvol} you don't have permission for \"setvol\""])
        let refused = try remote.request("notcommands")
        #expect(refused.contains("command: add") && refused.contains("command: setvol") && !refused.contains("command: status"),
                "\(refused)")
        let loopback = try NetworkProbe.greeted("127.0.0.1", daemon.port)
        #expect(try loopback.request("add \"01-morning-sine.mp3\"") == ["OK"])
        #expect(try loopback.request("notcommands") == ["OK"])
        let log = daemon.control.standardError
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
        let daemon = try InProcessTCPDaemon(bind: "0.0.0.0:0") {
            $0.zeroconf = false
            $0.passwords = [try PasswordSetting.parse("\(secret)@read,add,player,control,admin")]
        }
        defer { daemon.stop() }
        let guesser = try NetworkProbe.greeted("127.0.0.1", daemon.port)
        for attempt in 1...3 {
            #expect(try guesser.request("password guess-\(attempt)") == ["ACK [3@0] {password} incorrect password"])
        }
        let sentAt = ChildProcess.now()
        #expect(try guesser.request("password guess-4") == ["ACK [3@0] {password} incorrect password"])
        let answeredAfter = ChildProcess.now() - sentAt
        #expect(answeredAfter >= 0.9, "the fourth wrong answer came \(answeredAfter) s after it was sent")
        // Another local user, from the same address: its first try is answered as ever.
        let owner = try NetworkProbe.greeted("127.0.0.1", daemon.port)
        #expect(try owner.request("password \(secret)") == ["OK"])
        #expect(try owner.request("status").last == "OK")
        // Another peer (another address, here of this machine) is not held up either.
        if let address = NetworkProbe.nonLoopbackIPv4 {
            let other = try NetworkProbe.greeted(address, daemon.port)
            #expect(try other.request("password \(secret)") == ["OK"])
            #expect(try other.request("status").last == "OK")
        }
        // The right password from the guesser itself: accepted, the first time.
        #expect(try guesser.request("password \(secret)") == ["OK"])
        #expect(try guesser.request("status").last == "OK")

        let log = daemon.control.standardError
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
        let daemon = try InProcessTCPDaemon {
            $0.passwords = [try PasswordSetting.parse("\(secret)@read,add,player,control,admin")]
        }
        defer { daemon.stop() }
        let port = daemon.port
        let stop = Atomic<Bool>(false)
        let guesses = Atomic<Int>(0)
        let guessing = DispatchGroup()
        DispatchQueue.global().async(group: guessing) {
            while !stop.load(ordering: .relaxed) {
                if let client = try? NetworkProbe.greeted("127.0.0.1", port), (try? client.send("password guess\n")) != nil {
                    guesses.add(1, ordering: .relaxed)
                    client.close()
                }
                // The guesser's pace, what is under test: a guess every 20 ms.
                usleep(20_000)
            }
        }
        var answers: [[String]] = []
        for _ in 0..<30 {
            let owner = try NetworkProbe.greeted("127.0.0.1", port)
            answers.append(try owner.request("password \(secret)", timeout: 10))
            owner.close()
            // The owner's logins are spread over the guessing, one every 20 ms or so.
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
        let daemon = try InProcessTCPDaemon {
            $0.maxClients = 4
            $0.connectionTimeout = 1
        }
        defer { daemon.stop() }
        let connectedAt = ChildProcess.now()
        let crowd = try (0..<4).map { _ in try NetworkProbe.greeted(daemon.host, daemon.port) }
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
            next = try? NetworkProbe.greeted(daemon.host, daemon.port)
            return next != nil
        })
        #expect(try next?.request("ping") == ["OK"])
        for client in crowd + [owner] { client.close() }
    }

    /// `--max-clients` counts every listener together: with N = 3, a client on each of the
    /// Unix socket, TCP over IPv4 and TCP over IPv6 fills it; a fourth on any is closed at
    /// once without a greeting, and a place given back on one is taken on another.
    @Test(.enabled(if: NetworkProbe.hasIPv6Loopback, "::1 cannot be bound here"))
    func maxClientsCountsEveryListener() throws {
        let control = try InProcessDaemon {
            $0.musicDirectory = TestMedia.directory.path
            $0.noState = true
            $0.maxClients = 3
            $0.binds += [try ListenAddress.parse("127.0.0.1:0"), try ListenAddress.parse("[::1]:0")]
        }
        defer { control.stop() }
        var ports: (v4: Int?, v6: Int?)
        #expect(waitUntil(timeout: 10) {
            let log = control.standardError
            ports = (NetworkProbe.port(in: log, after: "control socket: 127.0.0.1:"), NetworkProbe.port(in: log, after: "control socket: [::1]:"))
            return ports.v4 != nil && ports.v6 != nil
        }, "\(control.standardError)")
        let (v4, v6) = (try #require(ports.v4), try #require(ports.v6))
        let unix = try control.client()
        let ipv4 = try NetworkProbe.greeted("127.0.0.1", v4)
        let ipv6 = try NetworkProbe.greeted("::1", v6)
        for connect in [{ try UnixSocketClient(path: control.socket) }, { try UnixSocketClient(host: "127.0.0.1", port: v4) },
                        { try UnixSocketClient(host: "::1", port: v6) }] {
            let refused = try connect()
            let end = refused.waitForEndOfFile(timeout: 5)
            #expect(end.closed && end.received.isEmpty, "\(refused.path): the fourth client got \(end)")
            refused.close()
        }
        for client in [unix, ipv4, ipv6] { #expect(try client.request("ping") == ["OK"]) }
        #expect(waitUntil(timeout: 5) {
            control.standardError.contains("3 clients connected, the most allowed (--max-clients): refused")
        })
        // The Unix client leaves: its place is taken over IPv6 (once the daemon has seen it go).
        unix.close()
        var next: UnixSocketClient?
        #expect(waitUntil(timeout: 5) {
            next = try? NetworkProbe.greeted("::1", v6)
            return next != nil
        })
        #expect(try next?.request("ping") == ["OK"])
        for client in [ipv4, ipv6] { #expect(try client.request("ping") == ["OK"]) }
    }
}

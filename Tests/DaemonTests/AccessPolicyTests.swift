import Logging
import MPDProtocol
import NIOCore
import Testing
@testable import DaemonCore
@testable import DaemonAssembly

/// Who may do what: mpd's defaults, the read-only rule for other machines, the
/// constant-time comparison and the limit on guessing.
@Suite struct AccessPolicyTests {
    private let logger = Logger(label: "test")

    private func policy(_ passwords: [(String, Permission)] = [], defaultPermissions: Permission? = nil,
                        localPermissions: Permission? = nil) -> AccessPolicy {
        AccessPolicy(passwords: passwords.map { .init(secret: Array($0.0.utf8), permissions: $0.1) },
                     defaultPermissions: defaultPermissions, localPermissions: localPermissions, logger: logger)
    }

    private let local: SocketAddress? = nil
    private let loopback = try! SocketAddress(ipAddress: "127.0.0.1", port: 40000)
    private let loopback6 = try! SocketAddress(ipAddress: "::1", port: 40000)
    private let remote = try! SocketAddress(ipAddress: "192.0.2.7", port: 40000)

    @Test func withoutAPasswordThisMachineMayDoEverythingAndOthersOnlyRead() {
        let open = policy()
        #expect(open.permissions(forPeer: local) == .all)
        #expect(open.permissions(forPeer: loopback) == .all)
        #expect(open.permissions(forPeer: loopback6) == .all)
        #expect(open.permissions(forPeer: remote) == .read)
        #expect(open.restrictsRemoteClientsByDefault)
        // Trusting the network is one setting away.
        let trusting = policy(defaultPermissions: .all)
        #expect(trusting.permissions(forPeer: remote) == .all && !trusting.restrictsRemoteClientsByDefault)
    }

    @Test func aPasswordTakesTheDefaultAwayAsInMPD() {
        let guarded = policy([("s3cret", .all)])
        #expect(guarded.permissions(forPeer: remote) == [])
        #expect(guarded.permissions(forPeer: loopback) == [])
        #expect(guarded.permissions(forPeer: local) == [])
        let localTrusted = policy([("s3cret", .all)], defaultPermissions: .read, localPermissions: .all)
        #expect(localTrusted.permissions(forPeer: local) == .all)
        #expect(localTrusted.permissions(forPeer: remote) == .read)
    }

    @Test func theRightPasswordGrantsItsPermissionsAndAWrongOneIsMPDsError() throws {
        let guarded = policy([("s3cret", [.read, .add]), ("admin@home", .all)])
        #expect(try guarded.check(password: "s3cret", peer: "a", now: 0) == [.read, .add])
        #expect(try guarded.check(password: "admin@home", peer: "a", now: 0) == .all)
        #expect(throws: MPDError(.password, "incorrect password")) { try guarded.check(password: "s3cre", peer: "a", now: 0) }
        #expect(throws: MPDError(.password, "incorrect password")) { try guarded.check(password: "s3cret ", peer: "a", now: 0) }
    }

    /// Guessing is slowed, never refused: past the free failures each wrong answer is held back
    /// twice as long (1 s ... 60 s), the right password is accepted at once whatever came before,
    /// and another peer is not slowed.
    @Test func aPeerThatKeepsFailingIsAnsweredLaterEachTimeAndTheRightPasswordAlwaysAtOnce() throws {
        let guarded = policy([("s3cret", .all)])
        for attempt in 0..<AccessPolicy.freeFailures {
            #expect(throws: MPDError(.password, "incorrect password")) {
                try guarded.check(password: "guess\(attempt)", peer: "192.0.2.7", client: 1, now: 10)
            }
            #expect(guarded.takeAnswerDelay(client: 1) == nil, "free failure \(attempt + 1)")
        }
        var delays: [Double?] = []
        for _ in 0..<8 {
            #expect(throws: MPDError(.password, "incorrect password")) { try guarded.check(password: "guess", peer: "192.0.2.7", client: 1, now: 10) }
            #expect(guarded.isHoldingAnswer(client: 1))
            delays.append(guarded.takeAnswerDelay(client: 1))
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(guarded.takeAnswerDelay(client: 1) == nil && !guarded.isHoldingAnswer(client: 1), "a delay is taken once")
        // The right password, at once, from the guessing address and connection.
        #expect(try guarded.check(password: "s3cret", peer: "192.0.2.7", client: 1, now: 10.1) == .all)
        #expect(guarded.takeAnswerDelay(client: 1) == nil)
        // Another peer is not slowed.
        #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "192.0.2.8", client: 2, now: 10.2) }
        #expect(guarded.takeAnswerDelay(client: 2) == nil)
        // After the right one the count starts again.
        #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "192.0.2.7", client: 1, now: 11) }
        #expect(guarded.takeAnswerDelay(client: 1) == nil)
        #expect(AccessPolicy.wait(afterFailures: 3) == 1 && AccessPolicy.wait(afterFailures: 5) == 4)
        #expect(AccessPolicy.wait(afterFailures: 50) == AccessPolicy.longestWait)
        #expect(AccessPolicy.wait(afterFailures: 16, free: 16) == 1 && AccessPolicy.wait(afterFailures: 18, free: 16) == 4)
    }

    /// A host may take any address of its /64 (privacy addresses): its failures count by address
    /// and by /64, which allows more, so that a new address is not three new guesses without a
    /// guesser slowing its whole network after three; another /64 is another peer. The right
    /// password is accepted throughout.
    @Test func anIPv6PeersFailuresCountByAddressAndByItsSlash64() throws {
        let keys = { (peer: String) in AccessPolicy.failureKeys(peer).map { "\($0.key) \($0.free)" } }
        #expect(keys("2001:db8:1:2::7") == ["2001:db8:1:2:0:0:0:7 3", "2001:db8:1:2::/64 16"])
        #expect(keys("2001:0db8:0001:0002:ffff:0:0:1") == ["2001:db8:1:2:ffff:0:0:1 3", "2001:db8:1:2::/64 16"])
        #expect(keys("::ffff:192.0.2.7") == ["192.0.2.7 3"])
        #expect(keys("192.0.2.7") == ["192.0.2.7 3"])
        let guarded = policy([("s3cret", .all)])
        for attempt in 0...AccessPolicy.freeFailures {
            #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "2001:db8:1:2::1", now: Double(attempt)) }
        }
        // That address is slowed; a neighbour in the /64 is not, after four failures.
        #expect(guarded.takeAnswerDelay(client: 0) == 1)
        #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "2001:db8:1:2::99", now: 4) }
        #expect(guarded.takeAnswerDelay(client: 0) == nil)
        #expect(try guarded.check(password: "s3cret", peer: "2001:db8:1:2::1", now: 4) == .all)
        // A guesser taking a new address for each guess: after the /64's allowance, every address is slowed.
        let network = policy([("s3cret", .all)])
        for attempt in 0..<AccessPolicy.freeFailuresPerNetwork {
            #expect(throws: MPDError.self) { try network.check(password: "guess", peer: "2001:db8:1:2::\(attempt + 1)", now: 10) }
        }
        #expect(network.takeAnswerDelay(client: 0) == nil)
        #expect(throws: MPDError.self) { try network.check(password: "guess", peer: "2001:db8:1:2:a:b:c:d", now: 10.5) }
        #expect(network.takeAnswerDelay(client: 0) == 1)
        #expect(try network.check(password: "s3cret", peer: "2001:db8:1:2:a:b:c:e", now: 10.5) == .all)
        // Another /64 is not slowed.
        #expect(throws: MPDError.self) { try network.check(password: "guess", peer: "2001:db8:1:3::1", now: 10.5) }
        #expect(network.takeAnswerDelay(client: 0) == nil)
        // A mapped IPv4 address and the plain one are one peer.
        for _ in 0..<AccessPolicy.freeFailures {
            #expect(throws: MPDError.self) { try network.check(password: "guess", peer: "::ffff:192.0.2.9", now: 20) }
        }
        #expect(throws: MPDError.self) { try network.check(password: "guess", peer: "192.0.2.9", now: 20.5) }
        #expect(network.takeAnswerDelay(client: 0) == 1)
    }

    /// Every local user is 127.0.0.1 (or `local` on the Unix socket): a local guesser neither
    /// locks the owner out nor slows the owner's first attempts; its failures count by connection,
    /// and by the whole machine with the larger allowance, which reconnecting does not reset and
    /// the owner's login does not either.
    @Test func aLocalGuesserLocksNoOtherLocalUserOut() throws {
        let keys = { (peer: String, client: Int) in AccessPolicy.failureKeys(peer, client: client).map { "\($0.key) \($0.free)" } }
        #expect(keys("127.0.0.1", 5) == ["127.0.0.1 client 5 3", "this machine 16"])
        #expect(keys("::1", 6) == ["::1 client 6 3", "this machine 16"])
        #expect(keys("local", 7) == ["local client 7 3", "this machine 16"])
        let guarded = policy([("s3cret", .all)])
        let (guesser, owner) = (1, 2)
        for _ in 0..<10 {
            #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "127.0.0.1", client: guesser, now: 1) }
        }
        #expect(guarded.takeAnswerDelay(client: guesser) != nil)
        // The owner's typo is answered at once, and the right password too.
        #expect(throws: MPDError.self) { try guarded.check(password: "s3cre", peer: "127.0.0.1", client: owner, now: 1) }
        #expect(guarded.takeAnswerDelay(client: owner) == nil)
        #expect(try guarded.check(password: "s3cret", peer: "127.0.0.1", client: owner, now: 1) == .all)
        // A guesser that reconnects for fresh guesses is slowed once the machine's allowance is spent.
        var slowed: [Int] = []
        for connection in 10..<20 {
            #expect(throws: MPDError.self) { try guarded.check(password: "guess", peer: "127.0.0.1", client: connection, now: 2) }
            if guarded.takeAnswerDelay(client: connection) != nil { slowed.append(connection) }
        }
        #expect(slowed == Array(15..<20), "the machine's 16 failures (10 + 1 + 5), then every one is slowed")
        // Still, the right password from any local client: at once.
        #expect(try guarded.check(password: "s3cret", peer: "local", client: 30, now: 2) == .all)
        #expect(try guarded.check(password: "s3cret", peer: "::1", client: 31, now: 2) == .all)
        #expect(guarded.takeAnswerDelay(client: 30) == nil && guarded.takeAnswerDelay(client: 31) == nil)
    }

    @Test func theComparisonLooksAtEveryByteWhateverTheLengths() {
        #expect(AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!AccessPolicy.constantTimeEqual(Array("abc".utf8), Array("abc\0".utf8)))
        #expect(!AccessPolicy.constantTimeEqual([], Array("a".utf8)))
        #expect(AccessPolicy.constantTimeEqual([], []))
    }

    @Test func permissionsParseAsMPDParsesThem() throws {
        #expect(try Permission.parse("read,add") == [.read, .add])
        #expect(try Permission.parse("control") == [.control, .player], "control implies player, as in mpd 0.23")
        #expect(try Permission.parse("") == [])
        #expect(throws: PermissionParseError.self) { try Permission.parse("read,write") }
        #expect(Permission.all.description == "read,add,player,control,admin")
        #expect(try PasswordSetting.parse("p@ss@read").secret == "p@ss")
        #expect(throws: DaemonOptionError.self) { try PasswordSetting.parse("nopermissions") }
        #expect(!"\(try PasswordSetting.parse("hunter2@read"))".contains("hunter2"))
    }

    @Test func listenAddressesParseAsMPDsBindToAddress() throws {
        #expect(try ListenAddress.parse("127.0.0.1:6601") == .tcp(host: "127.0.0.1", port: 6601))
        #expect(try ListenAddress.parse("[::1]:6600") == .tcp(host: "::1", port: 6600))
        #expect(try ListenAddress.parse("[::1]") == .tcp(host: "::1", port: 6600))
        #expect(try ListenAddress.parse("::") == .tcp(host: "::", port: 6600))
        #expect(try ListenAddress.parse("localhost") == .tcp(host: "localhost", port: 6600))
        #expect(try ListenAddress.parse("any:0") == .tcp(host: "any", port: 0))
        #expect(try ListenAddress.parse("/run/mpd.sock") == .unix("/run/mpd.sock"))
        #expect(throws: DaemonOptionError.self) { try ListenAddress.parse("example.com:6600") }
        #expect(throws: DaemonOptionError.self) { try ListenAddress.parse("127.0.0.1:70000") }
        #expect(throws: DaemonOptionError.self) { try ListenAddress.parse("[127.0.0.1]:6600") }
        #expect(ListenAddress.tcp(host: "localhost", port: 1).isLoopback && !ListenAddress.tcp(host: "any", port: 1).isLoopback)
        var options = DaemonOptions()
        #expect(Daemon.listeners(options).all == [.unix(Daemon.defaultSocketPath()), .conventionalTCP])
        options.binds = [.tcp(host: "192.0.2.1", port: 6600)]
        #expect(Daemon.listeners(options).all == [.unix(Daemon.defaultSocketPath()), .tcp(host: "192.0.2.1", port: 6600)])
        options.binds = [.unix("/tmp/x.sock")]
        #expect(Daemon.listeners(options).all == [.unix("/tmp/x.sock")])
    }
}

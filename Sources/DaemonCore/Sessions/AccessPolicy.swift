import Logging
import MPDProtocol
import NIOCore
import Synchronization

/// Who may do what: mpd's passwords and permissions (`password`, `default_permissions`,
/// `local_permissions`), and the limit on guessing passwords.
///
/// As in mpd 0.23: with no password every client may do everything; a password (`--password
/// SECRET@PERMS`) takes the default away (`--default-permissions` gives one back); clients on
/// a Unix socket get `--local-permissions`, or the default. One rule is this daemon's own,
/// so that a TCP listener on the network is safe by default: with neither a password nor
/// `--default-permissions`, a client from another machine may only read (``remotePermissions``).
///
/// Passwords are compared in constant time (each one, whole, every time: the reply takes as
/// long for a near miss as for a wild guess). The right password is always accepted at once,
/// whoever guessed wrong before: guessing is limited by slowing the wrong ones down, never by
/// refusing attempts, so a guesser cannot lock anyone out. A peer's failures are counted: after
/// three, the answer to each further wrong one is held back twice as long as the one before
/// (1 s, 2 s, ... 60 s at most; ``takeAnswerDelay(client:)``: the connection waits on a timer,
/// and takes the client's next command only after it). Failures are logged with the peer, never
/// with what it sent. An IPv6 peer is counted twice (``failureKeys(_:client:)``): by its address,
/// and by its /64 with a larger allowance (``freeFailuresPerNetwork``): one host may hold any
/// address of its network's /64 (privacy addresses) and must not get three free guesses with
/// each, while one guesser on a LAN (often a single /64) must not slow its neighbours after
/// three. Clients of this machine (loopback, the Unix socket) all share an address, which says
/// nothing of who they are: each connection is counted alone, and the machine as a whole with
/// the larger allowance, so that one local user's failures do not slow another's first attempts
/// while reconnecting does not give a guesser free ones without end.
///
/// Sendable: the settings are constants; the failures are behind their `Mutex`.
package final class AccessPolicy: Sendable {
    /// A password and what it gives.
    package struct Password: Sendable, Equatable {
        let secret: [UInt8]
        let permissions: Permission

        package init(secret: [UInt8], permissions: Permission) {
            self.secret = secret
            self.permissions = permissions
        }
    }

    /// Failures a peer may make before the answers to its wrong passwords are held back.
    static let freeFailures = 3
    /// Failures the addresses of one IPv6 /64, or the clients of this machine, may make together
    /// before the answers to all their wrong passwords are held back.
    static let freeFailuresPerNetwork = 16
    /// The longest a wrong password's answer is held back, in seconds.
    static let longestWait = 60.0
    /// Peers whose failures are remembered at once (the oldest are forgotten first).
    static let rememberedPeers = 1024

    let passwords: [Password]
    /// Clients over TCP from this machine (and from others where the network is trusted).
    package let defaultPermissions: Permission
    /// Clients on a Unix socket.
    let localPermissions: Permission
    /// Clients over TCP from another machine.
    let remotePermissions: Permission
    private let logger: Logger

    private struct Failures {
        var count = 0
        /// The last failure's time: the oldest record is forgotten first.
        var last = -Double.infinity
    }
    private let failures = Mutex<[String: Failures]>([:])
    /// How long the answer to a client's last wrong password is to be held back, by client.
    private let answerDelays = Mutex<[Int: Double]>([:])
    /// How many clients ``answerDelays`` holds: none, nearly always, and then nothing is locked
    /// to ask (``isHoldingAnswer(client:)``, once per command of a pipelined batch).
    private let heldAnswers = Atomic<Int>(0)
    /// The failures' key of every client of this machine together (``failureKeys(_:client:)``).
    static let thisMachine = "this machine"

    /// Every client may do everything (no password, no listener beyond loopback): for tests.
    package static let open = AccessPolicy(passwords: [], defaultPermissions: nil, localPermissions: nil,
                                   logger: Logger(label: "queueplayerd.access"))

    /// - Parameters:
    ///   - defaultPermissions: `--default-permissions`; nil: every permission without a password, none with one.
    ///   - localPermissions: `--local-permissions`; nil: the default.
    package init(passwords: [Password], defaultPermissions: Permission?, localPermissions: Permission?, logger: Logger) {
        self.passwords = passwords
        let fallback: Permission = passwords.isEmpty ? .all : []
        self.defaultPermissions = defaultPermissions ?? fallback
        self.localPermissions = localPermissions ?? defaultPermissions ?? fallback
        remotePermissions = passwords.isEmpty && defaultPermissions == nil ? .read : defaultPermissions ?? fallback
        self.logger = logger
    }

    /// Whether clients from other machines get less than the default because nothing was
    /// configured for them: the daemon says so at start when it listens beyond loopback.
    package var restrictsRemoteClientsByDefault: Bool { remotePermissions != defaultPermissions }

    /// What a new client holds until it sends a password: `remote` is its address (nil on a
    /// Unix socket).
    package func permissions(forPeer remote: SocketAddress?) -> Permission {
        guard let remote, let ip = remote.ipAddress else { return localPermissions }
        return Self.isLoopback(ip) ? defaultPermissions : remotePermissions
    }

    /// How a peer is named in the log and in the failures' count: its IP address (not its port:
    /// a guesser opens a connection per attempt), or `local`.
    package static func peerName(_ remote: SocketAddress?) -> String {
        remote?.ipAddress ?? "local"
    }

    package static func isLoopback(_ ip: String) -> Bool {
        ip == "::1" || ip.hasPrefix("127.") || ip.hasPrefix("::ffff:127.")
    }

    /// The `password` command: the permissions `candidate` gives, or mpd's `incorrect
    /// password`. The right password is never refused. A wrong one counts against the peer;
    /// past the free failures its answer is to be held back: `client` (``ClientSession/clientID``)
    /// then has a delay for ``takeAnswerDelay(client:)``.
    func check(password candidate: String, peer: String, client: Int = 0,
               now: Double = monotonicSeconds()) throws(MPDError) -> Permission {
        let keys = Self.failureKeys(peer, client: client)
        let bytes = Array(candidate.utf8)
        var granted: Permission?
        for password in passwords where Self.constantTimeEqual(password.secret, bytes) {
            // No early exit: every password is compared, whichever matches.
            granted = granted ?? password.permissions
        }
        guard let granted else {
            let (count, delay) = failures.withLock { failures -> (Int, Double) in
                var delay = 0.0
                for (key, free) in keys {
                    if failures[key] == nil, failures.count >= Self.rememberedPeers,
                       let oldest = failures.min(by: { $0.value.last < $1.value.last })?.key {
                        failures[oldest] = nil
                    }
                    var record = failures[key] ?? Failures()
                    record.count += 1
                    record.last = now
                    failures[key] = record
                    if record.count > free { delay = max(delay, Self.wait(afterFailures: record.count - 1, free: free)) }
                }
                return (failures[keys[0].key]?.count ?? 0, delay)
            }
            if delay > 0 {
                answerDelays.withLock { delays in
                    delays[client] = delay
                    heldAnswers.store(delays.count, ordering: .relaxed)
                }
            }
            let held = delay > 0 ? "; answered after \(Int(delay)) s" : ""
            logger.warning("wrong password from \(peer) (\(count) failed attempt\(count == 1 ? "" : "s")\(held))")
            throw MPDError(.password, "incorrect password")
        }
        // A guesser's count for the whole machine stays: another user's login must not reset it.
        failures.withLock { failures in for (key, _) in keys where key != Self.thisMachine { failures[key] = nil } }
        logger.info("password accepted from \(peer): \(granted)")
        return granted
    }

    /// How long the answer to `client`'s last command (a wrong password) is to be held back, in
    /// seconds, forgotten once taken; nil: answer at once.
    func takeAnswerDelay(client: Int) -> Double? {
        guard heldAnswers.load(ordering: .relaxed) > 0 else { return nil }
        return answerDelays.withLock { delays in
            defer { heldAnswers.store(delays.count, ordering: .relaxed) }
            return delays.removeValue(forKey: client)
        }
    }

    /// Whether the answer to `client`'s last command is to be held back (not taken yet).
    func isHoldingAnswer(client: Int) -> Bool {
        heldAnswers.load(ordering: .relaxed) > 0 && answerDelays.withLock { $0[client] != nil }
    }

    /// Whose failures a `peer` (``peerName(_:)``) adds to, with the failures each allows before
    /// its wrong answers are held back: its address (an IPv4-mapped one as the IPv4 address) with
    /// ``freeFailures``, and for an IPv6 address also its /64 (`2001:db8:1:2::/64`) with
    /// ``freeFailuresPerNetwork``. A client of this machine (loopback, `local`) is counted by its
    /// connection, `client`, and with every other client of the machine (``thisMachine``), which
    /// allows ``freeFailuresPerNetwork``.
    static func failureKeys(_ peer: String, client: Int = 0) -> [(key: String, free: Int)] {
        if peer == "local" || isLoopback(peer) {
            return [("\(peer) client \(client)", freeFailures), (thisMachine, freeFailuresPerNetwork)]
        }
        guard let bytes = ListenAddress.ipv6Bytes(peer) else { return [(peer, freeFailures)] }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return [(bytes[12...].map(String.init).joined(separator: "."), freeFailures)]
        }
        let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return [(groups.joined(separator: ":"), freeFailures), (groups[..<4].joined(separator: ":") + "::/64", freeFailuresPerNetwork)]
    }

    /// How long a wrong answer is held back after `count` failures, `free` of them answered at
    /// once (1 s for the first beyond them, then twice as long each time, 60 s at most).
    static func wait(afterFailures count: Int, free: Int = freeFailures) -> Double {
        min(longestWait, Double(1 << min(count - free, 6)))
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their lengths: every byte
    /// of the longer is looked at, and the lengths are compared along with the bytes.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt(bitPattern: a.count ^ b.count)
        let length = max(a.count, b.count)
        for index in 0..<length {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= UInt(x ^ y)
        }
        return difference == 0
    }
}

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
/// long for a near miss as for a wild guess). A peer's failures are counted: after three,
/// each further attempt must wait twice as long as the one before (1 s, 2 s, ... 60 s at
/// most), and one that comes sooner is refused unchecked. Failures are logged with the peer,
/// never with what it sent. An IPv6 peer is counted twice (``failureKeys(_:)``): by its address,
/// and by its /64 with a larger allowance (``freeFailuresPerNetwork``): one host may hold any
/// address of its network's /64 (privacy addresses) and must not get three free guesses with
/// each, while one guesser on a LAN (often a single /64) must not hold up its neighbours after
/// three.
///
/// Sendable: the settings are constants; the failures are behind their `Mutex`.
final class AccessPolicy: Sendable {
    /// A password and what it gives.
    struct Password: Sendable, Equatable {
        let secret: [UInt8]
        let permissions: Permission
    }

    /// Failures a peer may make before it has to wait between attempts.
    static let freeFailures = 3
    /// Failures the addresses of one IPv6 /64 may make together before all of them wait.
    static let freeFailuresPerNetwork = 16
    /// The longest wait between two attempts of a peer that keeps failing, in seconds.
    static let longestWait = 60.0
    /// Peers whose failures are remembered at once (the oldest are forgotten first).
    static let rememberedPeers = 1024

    let passwords: [Password]
    /// Clients over TCP from this machine (and from others where the network is trusted).
    let defaultPermissions: Permission
    /// Clients on a Unix socket.
    let localPermissions: Permission
    /// Clients over TCP from another machine.
    let remotePermissions: Permission
    private let logger: Logger

    private struct Failures {
        var count = 0
        var last = -Double.infinity
        /// The refusal of an attempt made too soon was logged for this run of failures.
        var loggedWait = false
    }
    private let failures = Mutex<[String: Failures]>([:])

    /// Every client may do everything (no password, no listener beyond loopback): for tests.
    static let open = AccessPolicy(passwords: [], defaultPermissions: nil, localPermissions: nil,
                                   logger: Logger(label: "queueplayerd.access"))

    /// - Parameters:
    ///   - defaultPermissions: `--default-permissions`; nil: every permission without a password, none with one.
    ///   - localPermissions: `--local-permissions`; nil: the default.
    init(passwords: [Password], defaultPermissions: Permission?, localPermissions: Permission?, logger: Logger) {
        self.passwords = passwords
        let fallback: Permission = passwords.isEmpty ? .all : []
        self.defaultPermissions = defaultPermissions ?? fallback
        self.localPermissions = localPermissions ?? defaultPermissions ?? fallback
        remotePermissions = passwords.isEmpty && defaultPermissions == nil ? .read : defaultPermissions ?? fallback
        self.logger = logger
    }

    /// Whether clients from other machines get less than the default because nothing was
    /// configured for them: the daemon says so at start when it listens beyond loopback.
    var restrictsRemoteClientsByDefault: Bool { remotePermissions != defaultPermissions }

    /// What a new client holds until it sends a password: `remote` is its address (nil on a
    /// Unix socket).
    func permissions(forPeer remote: SocketAddress?) -> Permission {
        guard let remote, let ip = remote.ipAddress else { return localPermissions }
        return Self.isLoopback(ip) ? defaultPermissions : remotePermissions
    }

    /// How a peer is named in the log and in the failures' count: its IP address (not its port:
    /// a guesser opens a connection per attempt), or `local`.
    static func peerName(_ remote: SocketAddress?) -> String {
        remote?.ipAddress ?? "local"
    }

    static func isLoopback(_ ip: String) -> Bool {
        ip == "::1" || ip.hasPrefix("127.") || ip.hasPrefix("::ffff:127.")
    }

    /// The `password` command: the permissions `candidate` gives, or mpd's `incorrect
    /// password` (also for an attempt that comes too soon after the peer's failures).
    func check(password candidate: String, peer: String, now: Double = monotonicSeconds()) throws(MPDError) -> Permission {
        let refused = MPDError(.password, "incorrect password")
        let keys = Self.failureKeys(peer)
        let waited = failures.withLock { failures -> (allowed: Bool, logWait: Double?) in
            for (key, free) in keys {
                guard var record = failures[key], record.count >= free else { continue }
                let wait = Self.wait(afterFailures: record.count, free: free)
                guard now - record.last < wait else { continue }
                defer { record.loggedWait = true; failures[key] = record }
                return (false, record.loggedWait ? nil : wait)
            }
            return (true, nil)
        }
        if !waited.allowed {
            if let wait = waited.logWait {
                logger.warning("password attempts from \(peer) refused unchecked: too many failures, at most one per \(Int(wait)) s")
            }
            throw refused
        }
        let bytes = Array(candidate.utf8)
        var granted: Permission?
        for password in passwords where Self.constantTimeEqual(password.secret, bytes) {
            // No early exit: every password is compared, whichever matches.
            granted = granted ?? password.permissions
        }
        guard let granted else {
            let count = failures.withLock { failures -> Int in
                for (key, _) in keys {
                    if failures[key] == nil, failures.count >= Self.rememberedPeers,
                       let oldest = failures.min(by: { $0.value.last < $1.value.last })?.key {
                        failures[oldest] = nil
                    }
                    var record = failures[key] ?? Failures()
                    record.count += 1
                    record.last = now
                    record.loggedWait = false
                    failures[key] = record
                }
                return failures[keys[0].key]?.count ?? 0
            }
            logger.warning("wrong password from \(peer) (\(count) failed attempt\(count == 1 ? "" : "s"))")
            throw refused
        }
        failures.withLock { failures in for (key, _) in keys { failures[key] = nil } }
        logger.info("password accepted from \(peer): \(granted)")
        return granted
    }

    /// Whose failures a `peer` (``peerName(_:)``) adds to, with the failures each allows before
    /// a wait: its address (an IPv4-mapped one as the IPv4 address) with ``freeFailures``, and
    /// for an IPv6 address also its /64 (`2001:db8:1:2::/64`) with ``freeFailuresPerNetwork``.
    static func failureKeys(_ peer: String) -> [(key: String, free: Int)] {
        guard let bytes = ListenAddress.ipv6Bytes(peer) else { return [(peer, freeFailures)] }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return [(bytes[12...].map(String.init).joined(separator: "."), freeFailures)]
        }
        let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return [(groups.joined(separator: ":"), freeFailures), (groups[..<4].joined(separator: ":") + "::/64", freeFailuresPerNetwork)]
    }

    /// The least time between two attempts after `count` failures, `free` of them allowed
    /// without a wait (1 s after the first beyond them, then twice as long each time).
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

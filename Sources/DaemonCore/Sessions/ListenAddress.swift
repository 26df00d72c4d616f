import FeedFetch
import Foundation

/// Where the control server listens (`--bind`, repeatable, and `bind` in the configuration
/// file): a Unix socket path, or `HOST:PORT` for TCP as mpd's `bind_to_address` and `port`
/// say it: an IPv4 address, an IPv6 address in brackets (`[::1]:6600`), `localhost` (127.0.0.1
/// and ::1) or `any` (every address, IPv6 and IPv4). The port may be left out (6600, mpd's);
/// 0 lets the kernel choose one (the tests' choice; the log says which).
///
/// A host name other than `localhost` is refused, as `--http` refuses one: only a literal says
/// whether the listener is reachable from other machines, which decides what their clients
/// may do by default (``isLoopback``, ``AccessPolicy``).
public enum ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A Unix socket at this path.
    case unix(String)
    /// TCP on `host` (`localhost`, `any`, or an address literal without brackets) and `port`.
    case tcp(host: String, port: Int)

    /// mpd's port.
    public static let defaultPort = 6600

    /// The TCP listener the daemon opens besides its Unix socket when no `--bind` is given.
    public static let conventionalTCP = ListenAddress.tcp(host: "localhost", port: defaultPort)

    /// Parses one `--bind` value. A value starting with `/`, `~` or `.` is a socket path (`~`
    /// expanded); anything else is `HOST[:PORT]`.
    public static func parse(_ text: String) throws(DaemonOptionError) -> ListenAddress {
        if text.hasPrefix("/") || text.hasPrefix("~") || text.hasPrefix(".") {
            let path = UserDirectories.expandingTilde(text, environment: ProcessInfo.processInfo.environment)
            guard path.utf8.count <= 100 else { throw DaemonOptionError("--bind \(text): a socket path must be at most 100 bytes long.") }
            return .unix(path)
        }
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw DaemonOptionError("--bind \(text): give [IPv6]:PORT, e.g. [::1]:6600.")
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw DaemonOptionError("--bind \(text): give [IPv6]:PORT, e.g. [::1]:6600.") }
                portText = rest.dropFirst()
            }
            guard host.contains(":") else { throw DaemonOptionError("--bind \(text): only an IPv6 address goes in brackets.") }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (0...65535).contains(number) else {
                throw DaemonOptionError("--bind \(text): give a port from 0 to 65535.")
            }
            port = number
        }
        guard host == "localhost" || host == "any" || isIPv4(host) || isIPv6(host) else {
            throw DaemonOptionError("--bind \(text): give a socket path, or HOST:PORT with an IP address, localhost or any as HOST.")
        }
        return .tcp(host: host, port: port)
    }

    /// True for a Unix socket, and for a TCP address only this machine reaches (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool {
        switch self {
        case .unix: true
        case .tcp(let host, _): host == "localhost" || host == "::1" || host.hasPrefix("127.") && Self.isIPv4(host)
        }
    }

    /// The TCP port; nil for a Unix socket.
    public var port: Int? {
        if case .tcp(_, let port) = self { return port }
        return nil
    }

    public var description: String {
        switch self {
        case .unix(let path): path
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// The addresses to bind: `localhost` is IPv4's and IPv6's loopback, `any` IPv6's wildcard
    /// (which takes IPv4 too) or, without IPv6, IPv4's. Each with whether it may be missing.
    package var socketHosts: [(host: String, optional: Bool)] {
        switch self {
        case .unix: []
        case .tcp(let host, _):
            switch host {
            case "localhost": [("127.0.0.1", false), ("::1", true)]
            case "any": [("::", true), ("0.0.0.0", true)]
            default: [(host, false)]
            }
        }
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && Int(part).map { (0...255).contains($0) } == true
        }
    }

    static func isIPv6(_ text: String) -> Bool { ipv6Bytes(text) != nil }

    /// The 16 bytes of an IPv6 address in text, or nil if `text` is not one.
    static func ipv6Bytes(_ text: String) -> [UInt8]? {
        // The 16 bytes of an `in6_addr`, as plain bytes: the C struct's initializer is one of
        // the Glibc types this toolchain attributes to libdispatch's module (Package.swift).
        var address = [UInt8](repeating: 0, count: 16)
        guard text.contains(":"), inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return address
    }
}

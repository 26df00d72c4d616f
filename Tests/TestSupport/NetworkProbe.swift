import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What this machine's network offers the TCP tests, and their clients.
public enum NetworkProbe {
    /// Whether this machine can bind `::1` (one without IPv6 on its loopback cannot: nothing
    /// to test over IPv6 there).
    public static var hasIPv6Loopback: Bool {
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
    public static var nonLoopbackIPv4: String? {
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
    public static func greeted(_ host: String, _ port: Int) throws -> UnixSocketClient {
        let client = try UnixSocketClient(host: host, port: port)
        let greeting = try client.readLine()
        guard greeting == "OK MPD 0.23.5" else { throw UnixSocketError("\(host):\(port) greeted \(String(describing: greeting))") }
        return client
    }

    /// The port a daemon's log names after `prefix` (`control socket: 127.0.0.1:`).
    public static func port(in log: String, after prefix: String) -> Int? {
        guard let range = log.range(of: prefix) else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// The host a `--bind HOST:PORT` names, and the prefix of the log's `control socket:` line for it.
    public static func shown(bind: String) -> (host: String, logPrefix: String) {
        let shown = bind.hasPrefix("[") ? String(bind[..<bind.firstIndex(of: "]")!]) + "]:" : String(bind.split(separator: ":")[0]) + ":"
        let host = bind.hasPrefix("[") ? String(shown.dropFirst().dropLast(2)) : String(shown.dropLast())
        return (host, "control socket: " + shown)
    }
}

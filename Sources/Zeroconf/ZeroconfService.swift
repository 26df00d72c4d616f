#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What the daemon announces by Zeroconf (DNS-SD over mDNS): mpd's `_mpd._tcp` on the port
/// of its TCP listener, under the name `--zeroconf-name` gives, so that clients on the
/// network (M.A.L.P., MPDroid, Cantata's server list) find it without an address.
package struct ZeroconfService: Sendable, Equatable {
    /// mpd's service type; clients browse for it.
    package static let type = "_mpd._tcp"
    /// `--zeroconf-name`'s default (mpd's is `Music Player @ %h`).
    package static let defaultName = "queueplayerd @ %h"

    /// The service's name, `%h` already replaced.
    package var name: String
    package var port: Int
    /// Whether only this machine reaches the listener (TCP on a loopback address): then the
    /// service is announced on the loopback interface alone, never to a network whose
    /// machines could not connect to it. mpd announces its port everywhere whatever it binds.
    package var isLoopbackOnly: Bool

    /// The service for the TCP listeners `listeners` lists in order (port, loopback), or nil
    /// when there is none: one port, as mpd announces its one `port`: the first listener that
    /// other machines reach, else the first (announced to this machine only).
    package init?(name: String, listeners: [(port: Int, isLoopback: Bool)]) {
        guard let chosen = listeners.first(where: { !$0.isLoopback }) ?? listeners.first else { return nil }
        self.name = name
        port = chosen.port
        isLoopbackOnly = chosen.isLoopback
    }

    /// `template` with `%h` replaced by `hostName`, as mpd replaces it (its first `%h` only).
    /// Avahi takes at most 63 bytes of a name (a DNS label): a longer one is cut at a
    /// character boundary rather than refused.
    package static func name(from template: String, hostName: String) -> String {
        var name = template
        if let range = name.range(of: "%h") { name.replaceSubrange(range, with: hostName) }
        var cut = Substring(name)
        while cut.utf8.count > 63 { cut.removeLast() }
        return String(cut)
    }

    /// This machine's name (`gethostname`, as mpd's `%h`).
    package static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// `sd_notify(3)` without libsystemd: each state (`READY=1`, `STATUS=…`, `WATCHDOG=1`,
/// `STOPPING=1`) is one datagram written to the Unix socket named by `$NOTIFY_SOCKET`,
/// a file system path (`/run/user/1000/systemd/notify`) or an abstract address (`@name`).
///
/// Sending never raises SIGPIPE and gives up after a second if the service manager's
/// queue is full; callable from any thread.
final class SystemdNotifier: Sendable {
    private let fd: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// Where `$NOTIFY_SOCKET` pointed.
    let socketName: String

    /// A notifier for `$NOTIFY_SOCKET`, or nil when the variable is unset or names
    /// something else than a Unix socket (e.g. an `AF_VSOCK` address).
    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let name = environment["NOTIFY_SOCKET"], name.count > 1,
              name.hasPrefix("/") || name.hasPrefix("@") else { return nil }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        var path = Array(name.utf8)
        let isAbstract = path[0] == UInt8(ascii: "@")
        if isAbstract {
            path[0] = 0  // an abstract address starts with a NUL byte and is not NUL-terminated
        }
        guard path.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            raw.copyBytes(from: path)
            if !isAbstract { raw[path.count] = 0 }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        address = socketAddress
        addressLength = socklen_t(pathOffset + path.count + (isAbstract ? 0 : 1))

        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        socketName = name
    }

    deinit { close(fd) }

    /// Sends `state` (newline-separated assignments); true if the datagram left.
    @discardableResult
    func notify(_ state: String) -> Bool {
        let message = Array(state.utf8)
        var target = address
        return message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    while true {
                        let sent = sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), pointer, addressLength)
                        if sent < 0 && errno == EINTR { continue }
                        return sent == bytes.count
                    }
                }
            }
        }
    }
}

import DaemonCore
import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// The control server's listening sockets, made here and handed to NIO (``ControlServer``):
/// the ``AcceptFailureHandler`` needs each one's descriptor.
///
/// A Unix socket is bound with mode 0600, refusing to start when another daemon answers at
/// its path and replacing a stale socket file otherwise. A TCP socket is bound with
/// `SO_REUSEADDR` (a restart does not wait for the old connections' `TIME_WAIT`); IPv6's
/// wildcard takes IPv4 too, other IPv6 addresses only IPv6.
package enum ListeningSockets {
    /// Why a socket could not be set up.
    package struct SetupError: Error, CustomStringConvertible {
        package let description: String
        /// The address is taken (`EADDRINUSE`): another mpd, say, on the conventional port.
        var isAddressInUse = false
    }

    /// A listening descriptor, and what it is.
    package struct Socket {
        let fd: Int32
        /// True for a Unix socket: its clients are this machine's (``AccessPolicy``).
        let isUnix: Bool
        /// For the log: the path, or `ADDRESS:PORT` with the port bound.
        package let description: String
        /// The TCP port bound (the kernel's choice for port 0); nil for a Unix socket.
        package let port: Int?

        /// Whether only this machine reaches it: a Unix socket, or TCP on a loopback address.
        package var isLoopback: Bool { isUnix || loopbackAddress }
        fileprivate var loopbackAddress = false
    }

    /// A socket file this process bound, known by its device and inode: removed at exit only
    /// if it is still that file (a second daemon started meanwhile on the path, refused or not,
    /// never loses its socket to this one's exit).
    struct SocketFile: Sendable {
        let path: String
        private let device: UInt64
        private let inode: UInt64

        /// The socket file now at `path`; nil if there is none.
        init?(path: String) {
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
            self.path = path
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }

        func removeIfUnchanged() {
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK,
                  UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else { return }
            unlink(path)
        }
    }

    /// The sockets systemd passed this process (`LISTEN_FDS`, `LISTEN_PID`: fds 3...), each
    /// Unix or TCP as `getsockname` says; nil when it passed none. The variables are removed,
    /// so that no child takes the sockets for its own.
    static func passedBySystemd() -> [Socket]? {
        // getenv: the two variables only, as they are now (`ProcessInfo.environment` would build
        // the whole dictionary for them).
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
              let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1 else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return (0..<count).map { index in
            let fd = Int32(3 + index)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            let address = try? SocketAddress.localAddress(of: fd)
            switch address {
            case .v4?, .v6?:
                let shown = ListenAddress.tcp(host: address?.ipAddress ?? "?", port: address?.port ?? 0)
                var socket = Socket(fd: fd, isUnix: false, description: "\(shown) (passed by systemd, fd \(fd))", port: address?.port)
                socket.loopbackAddress = AccessPolicy.isLoopback(address?.ipAddress ?? "")
                return socket
            default:
                return Socket(fd: fd, isUnix: true, description: "the socket passed by systemd (fd \(fd))", port: nil)
            }
        }
    }

    /// A Unix stream socket bound at `path` (mode 0600) and listening.
    static func unix(at path: String) throws -> Socket {
        try prepare(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SetupError(description: "cannot make the control socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw SetupError(description: "\(path): too long for a socket path")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SetupError(description: "cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o600)
        return Socket(fd: fd, isUnix: true, description: path, port: nil)
    }

    /// The TCP sockets `address` stands for, bound and listening: one for an address literal,
    /// IPv4's and (where the machine has it) IPv6's loopback for `localhost`, IPv6's wildcard
    /// (or IPv4's, without IPv6) for `any`.
    static func tcp(_ address: ListenAddress) throws -> [Socket] {
        guard case .tcp(let host, var port) = address else { return [] }
        var sockets: [Socket] = []
        do {
            for (candidate, optional) in address.socketHosts {
                // `any`: the IPv6 wildcard takes IPv4 too; IPv4's is only for a machine without IPv6.
                if host == "any", candidate == "0.0.0.0", !sockets.isEmpty { break }
                do {
                    let socket = try tcp(host: candidate, port: port, dualStack: host == "any")
                    // `localhost:0`: the second loopback takes the port the kernel gave the first.
                    if port == 0, let bound = socket.port { port = bound }
                    sockets.append(socket)
                } catch let error as SetupError where optional && !error.isAddressInUse {
                    continue
                }
            }
        } catch {
            for socket in sockets { close(socket.fd) }
            throw error
        }
        guard !sockets.isEmpty else { throw SetupError(description: "cannot listen on \(address): no address of it could be bound") }
        return sockets
    }

    private static func tcp(host: String, port: Int, dualStack: Bool) throws -> Socket {
        let address: SocketAddress
        do {
            address = try SocketAddress(ipAddress: host, port: port)
        } catch {
            throw SetupError(description: "\(host): not an IP address")
        }
        let family = address.protocol.rawValue
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let shown = ListenAddress.tcp(host: host, port: port)
        guard fd >= 0 else { throw SetupError(description: "cannot listen on \(shown): \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            var v6Only: Int32 = dualStack ? 0 : 1
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &v6Only, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockAddr { bind(fd, $0, socklen_t($1)) }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw SetupError(description: "cannot listen on \(shown): \(String(cString: strerror(code)))",
                             isAddressInUse: code == EADDRINUSE)
        }
        let boundPort = (try? SocketAddress.localAddress(of: fd))?.port ?? port
        var socket = Socket(fd: fd, isUnix: false, description: ListenAddress.tcp(host: host, port: boundPort).description, port: boundPort)
        socket.loopbackAddress = AccessPolicy.isLoopback(host)
        return socket
    }

    /// Makes the path usable: its directory exists (private when it is our fallback),
    /// no other daemon answers there, and a stale socket file is removed.
    private static func prepare(_ path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw SetupError(description: "cannot create \(directory) for the control socket: \(error.localizedDescription)")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw SetupError(description: "\(path) exists and is not a socket; refusing to replace it")
        }
        if answers(path) {
            throw SetupError(description: "another queueplayerd is already listening on \(path)")
        }
        unlink(path)
    }

    /// True if something accepts connections on the socket at `path`.
    private static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(MemoryLayout.size(ofValue: address.sun_path) - 1))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}

private extension SocketAddress {
    /// The address a socket is bound to (`getsockname`).
    static func localAddress(of fd: Int32) throws -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw ListeningSockets.SetupError(description: "getsockname: \(String(cString: strerror(errno)))") }
        switch Int32(storage.ss_family) {
        case AF_INET:
            let v4 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            return SocketAddress(v4, host: "")
        case AF_INET6:
            let v6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            return SocketAddress(v6, host: "")
        default:
            return try SocketAddress(unixDomainSocketPath: "/")
        }
    }
}

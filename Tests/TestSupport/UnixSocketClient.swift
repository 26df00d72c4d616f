import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw client of a Unix stream socket (the daemon's control socket) or of a TCP one, written with
/// `socket`/`connect`/`send`/`recv` so tests control every byte and every timeout.
///
/// Not thread-safe: one test thread drives one client.
public final class UnixSocketClient {
    /// What one `receive` saw.
    public enum Received: Equatable, Sendable {
        case data([UInt8])
        case endOfFile
        case timedOut
        case failed(Int32)
    }

    public let fileDescriptor: Int32
    public let path: String
    private var buffer: [UInt8] = []
    private var isClosed = false

    /// Connects once; throws if the socket does not accept.
    public init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError("socket: \(String(cString: strerror(errno)))") }
        let result = Self.withAddress(path) { address, length in Glibc.connect(fd, address, length) }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw UnixSocketError("connect \(path): \(String(cString: strerror(error)))")
        }
        fileDescriptor = fd
    }

    /// Connects once over TCP to a numeric `host` (IPv4 or IPv6, without brackets): the same
    /// raw client for the daemon's TCP listeners. `path` is `host:port` then.
    public init(host: String, port: Int) throws {
        path = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let address = found else {
            throw UnixSocketError("getaddrinfo \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(address) }
        let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError("socket: \(String(cString: strerror(errno)))") }
        guard Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            let error = errno
            Glibc.close(fd)
            throw UnixSocketError("connect \(path): \(String(cString: strerror(error)))")
        }
        fileDescriptor = fd
    }

    /// Connects, retrying until the socket accepts or `timeout` seconds have passed.
    public static func connect(path: String, timeout: Double = 5) throws -> UnixSocketClient {
        let deadline = ChildProcess.now() + timeout
        var lastError: Error = UnixSocketError("\(path) never accepted")
        while ChildProcess.now() < deadline {
            do { return try UnixSocketClient(path: path) } catch { lastError = error }
            usleep(10_000)
        }
        throw lastError
    }

    /// Polls until a client can connect to `path` (the daemon is ready); true if it could.
    public static func waitUntilAccepting(_ path: String, timeout: Double = 5) -> Bool {
        guard let client = try? connect(path: path, timeout: timeout) else { return false }
        client.close()
        return true
    }

    /// Binds a socket at `path` and closes it, leaving the socket file on disk: the
    /// remains of a daemon that died without cleaning up.
    public static func makeStaleSocketFile(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError("socket: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        let result = withAddress(path) { address, length in bind(fd, address, length) }
        guard result == 0 else { throw UnixSocketError("bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close() }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fileDescriptor)
    }

    // MARK: Sending

    /// Sends all of `text`, waiting up to `timeout` seconds for room in the socket buffer.
    public func send(_ text: String, timeout: Double = 5) throws {
        let bytes = Array(text.utf8)
        let sent = sendAvailable(bytes, timeout: timeout)
        guard sent.count == bytes.count else {
            throw UnixSocketError("sent \(sent.count) of \(bytes.count) bytes (\(sent.error.map { String(cString: strerror($0)) } ?? "timed out"))")
        }
    }

    /// Sends as much of `bytes` as the peer takes within `timeout` seconds; never raises
    /// SIGPIPE. Returns the count sent and the errno that stopped it, if any.
    @discardableResult
    public func sendAvailable(_ bytes: [UInt8], timeout: Double) -> (count: Int, error: Int32?) {
        let deadline = ChildProcess.now() + timeout
        var offset = 0
        while offset < bytes.count {
            let remaining = deadline - ChildProcess.now()
            if remaining <= 0 { return (offset, nil) }
            var pollDescriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&pollDescriptor, 1, Int32(max(1, remaining * 1000)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return (offset, ready < 0 ? errno : nil) }
            let count = bytes[offset...].withUnsafeBytes { raw in
                Glibc.send(fileDescriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return (offset, errno)
            }
            offset += count
        }
        return (offset, nil)
    }

    // MARK: Receiving

    /// One `recv`, after waiting up to `timeout` seconds for something to read.
    /// Bytes already buffered by `readLine` are returned first.
    public func receive(timeout: Double) -> Received {
        if !buffer.isEmpty {
            defer { buffer.removeAll() }
            return .data(buffer)
        }
        return receiveFromSocket(timeout: timeout)
    }

    /// Reads one line (without its `\n`); nil at end of file. Throws on timeout.
    public func readLine(timeout: Double = 5) throws -> String? {
        let deadline = ChildProcess.now() + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline - ChildProcess.now()
            guard remaining > 0 else {
                throw UnixSocketError("no complete line within \(timeout) s (have \(buffer.count) bytes: \(String(decoding: buffer.prefix(200), as: UTF8.self).debugDescription))")
            }
            switch receiveFromSocket(timeout: remaining) {
            case .data(let bytes): buffer += bytes
            case .endOfFile:
                guard buffer.isEmpty else {
                    throw UnixSocketError("end of file inside a line: \(String(decoding: buffer.prefix(200), as: UTF8.self).debugDescription)")
                }
                return nil
            case .timedOut: continue
            case .failed(let error): throw UnixSocketError("recv: \(String(cString: strerror(error)))")
            }
        }
    }

    /// Reads the lines of one MPD reply, up to and including the final `OK` or `ACK ...` line.
    /// Throws on timeout or on end of file before the reply is complete.
    public func readReply(timeout: Double = 5) throws -> [String] {
        let deadline = ChildProcess.now() + timeout
        var lines: [String] = []
        while true {
            guard let line = try readLine(timeout: max(0.001, deadline - ChildProcess.now())) else {
                throw UnixSocketError("end of file after \(lines)")
            }
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") { return lines }
        }
    }

    /// Sends `command` (a `\n` is added) and reads its reply.
    public func request(_ command: String, timeout: Double = 5) throws -> [String] {
        try send(command + "\n", timeout: timeout)
        return try readReply(timeout: timeout)
    }

    /// Waits up to `timeout` seconds for the peer to close: true if end of file came
    /// (bytes that arrived first are returned in `received`).
    public func waitForEndOfFile(timeout: Double) -> (closed: Bool, received: [UInt8]) {
        let deadline = ChildProcess.now() + timeout
        var received = buffer
        buffer.removeAll()
        while true {
            let remaining = deadline - ChildProcess.now()
            if remaining <= 0 { return (false, received) }
            switch receiveFromSocket(timeout: remaining) {
            case .data(let bytes): received += bytes
            case .endOfFile: return (true, received)
            case .failed(let error) where error == ECONNRESET: return (true, received)
            case .failed: return (false, received)
            case .timedOut: return (false, received)
            }
        }
    }

    private func receiveFromSocket(timeout: Double) -> Received {
        var pollDescriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        let deadline = ChildProcess.now() + timeout
        while true {
            let remaining = deadline - ChildProcess.now()
            if remaining <= 0 { return .timedOut }
            let ready = poll(&pollDescriptor, 1, Int32(max(1, (remaining * 1000).rounded(.up))))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return .failed(errno) }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { raw in
                recv(fileDescriptor, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                return .failed(errno)
            }
            if count == 0 { return .endOfFile }
            return .data(Array(chunk[..<count]))
        }
    }

    private static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

/// A socket operation failed or timed out.
public struct UnixSocketError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

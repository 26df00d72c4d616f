import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 whose every answer is written by the test, byte by byte
/// if it likes: the hostile server nginx cannot be made into (a `206` that ignores `If-Range`,
/// a body cut mid-way, a trickle of a byte a second, a redirect loop).
///
/// Each connection gets one request (its head read up to the blank line) and is closed after
/// the handler returns; the handler runs on the connection's own thread, so a trickling answer
/// holds only its own connection. Every request is recorded, in the order they arrived.
public final class ScriptedHTTPServer: Sendable {
    /// A request's line and headers (names lower-cased).
    public struct Request: Sendable, CustomStringConvertible {
        public var method: String
        public var path: String
        public var headers: [String: String]

        public func header(_ name: String) -> String? { headers[name.lowercased()] }
        public var description: String { "\(method) \(path) \(headers)" }
    }

    /// The client's end of one exchange, for the handler to answer on.
    public final class Connection: Sendable {
        private let socket: Int32
        private let server: ScriptedHTTPServer

        fileprivate init(socket: Int32, server: ScriptedHTTPServer) {
            self.socket = socket
            self.server = server
        }

        /// False once the client hung up (a write failed) or the server is stopping.
        public var isOpen: Bool { !server.stopping.load(ordering: .acquiring) && !hungUp.load(ordering: .relaxed) }
        private let hungUp = Atomic<Bool>(false)

        /// Writes `data` whole; false if the client is gone.
        @discardableResult
        public func write(_ data: Data) -> Bool {
            guard isOpen else { return false }
            let sent = data.withUnsafeBytes { buffer -> Bool in
                var offset = 0
                while offset < buffer.count {
                    let written = send(socket, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return false }
                    offset += written
                }
                return true
            }
            if !sent { hungUp.store(true, ordering: .relaxed) }
            return sent
        }

        /// Writes a response head: status line, `headers` in order, `Connection: close`.
        @discardableResult
        public func writeHead(_ status: String, _ headers: [(String, String)]) -> Bool {
            var text = "HTTP/1.1 \(status)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            text += "Connection: close\r\n\r\n"
            return write(Data(text.utf8))
        }

        /// Waits `seconds` (a trickling server's pace), or less if the server stops.
        public func pause(_ seconds: Double) {
            let deadline = ChildProcess.now() + seconds
            while isOpen, ChildProcess.now() < deadline { usleep(10_000) }
        }
    }

    public let port: UInt16
    private let listening: Int32
    private let handler: @Sendable (Request, Connection) -> Void
    fileprivate let stopping = Atomic<Bool>(false)
    private let recorded = Mutex<[Request]>([])
    private let threads = Mutex<Int>(0)

    /// Listens on an ephemeral port of 127.0.0.1; `handler` answers each request.
    public init(_ handler: @escaping @Sendable (Request, Connection) -> Void) throws {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, length) }
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) }
        }
        guard listening >= 0, bound == 0, named == 0, listen(listening, 64) == 0 else {
            let code = errno
            if listening >= 0 { close(listening) }
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        self.listening = listening
        self.handler = handler
        port = UInt16(bigEndian: address.sin_port)
        threads.withLock { $0 += 1 }
        Thread.detachNewThread { [self] in acceptUntilStopped() }
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Every request so far, in order of arrival.
    public var requests: [Request] { recorded.withLock { $0 } }

    public func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Stops accepting, tells every handler to stop (``Connection/isOpen``), and waits for the threads.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = waitUntil(timeout: 10) { threads.withLock { $0 } == 0 }
        close(listening)
    }

    private func acceptUntilStopped() {
        defer { threads.withLock { $0 -= 1 } }
        while !stopping.load(ordering: .acquiring) {
            var ready = pollfd(fd: listening, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 20) > 0 else { continue }
            let connection = accept(listening, nil, nil)
            guard connection >= 0 else { continue }
            threads.withLock { $0 += 1 }
            Thread.detachNewThread { [self] in
                defer { threads.withLock { $0 -= 1 } }
                serve(connection)
            }
        }
    }

    private func serve(_ socket: Int32) {
        defer { close(socket) }
        guard let request = readHead(socket) else { return }
        recorded.withLock { $0.append(request) }
        handler(request, Connection(socket: socket, server: self))
        shutdown(socket, Int32(SHUT_WR))
    }

    /// The request's head, read up to its blank line (no body: the downloader sends none).
    private func readHead(_ socket: Int32) -> Request? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Data("\r\n\r\n".utf8)
        while data.range(of: end) == nil {
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard !stopping.load(ordering: .acquiring) else { return nil }
            guard poll(&ready, 1, 50) >= 0 else { return nil }
            guard ready.revents != 0 else { continue }
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0, data.count < 1 << 16 else { return nil }
            data.append(contentsOf: buffer[0..<count])
        }
        let lines = String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n")
        let words = lines[0].split(separator: " ")
        guard words.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Request(method: String(words[0]), path: String(words[1]), headers: headers)
    }
}

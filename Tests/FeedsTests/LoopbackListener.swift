import Foundation
import Glibc
import Synchronization

/// A TCP listener on 127.0.0.1 that counts the connections made to it: the witness that a
/// parser did (or did not) fetch a URL. It accepts and closes at once, so a parser that does
/// connect gets an empty answer rather than hanging on its own timeout.
final class LoopbackListener: Sendable {
    let port: UInt16
    private let socket: Int32
    private let connections = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    init() throws {
        let listening = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
        guard listening >= 0, bound == 0, named == 0, listen(listening, 16) == 0 else {
            if listening >= 0 { close(listening) }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        socket = listening
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in acceptUntilStopped() }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    private func acceptUntilStopped() {
        while !stopping.load(ordering: .acquiring) {
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 20) > 0 { acceptOne() }
        }
        stopped.signal()
    }

    private func acceptOne() {
        let connection = accept(socket, nil, nil)
        guard connection >= 0 else { return }
        connections.add(1, ordering: .relaxed)
        close(connection)
    }

    /// Stops listening and returns how many connections were made, those still waiting in
    /// the backlog included (a connection is complete once the kernel has queued it).
    func stop() -> Int {
        stopping.store(true, ordering: .releasing)
        stopped.wait()
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        while true {
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { break }
            connections.add(1, ordering: .relaxed)
            close(connection)
        }
        close(socket)
        return connections.load(ordering: .relaxed)
    }
}

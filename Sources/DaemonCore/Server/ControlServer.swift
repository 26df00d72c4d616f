import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The control socket: a Unix stream socket speaking the MPD protocol.
///
/// It listens on the socket systemd passes (`LISTEN_FDS`/`LISTEN_PID`, fd 3),
/// or binds its path itself: mode 0600, refusing to start when another daemon
/// answers there, replacing a stale socket file otherwise.
final class ControlServer: Sendable {
    /// Why the control socket could not be set up.
    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    /// The control socket's event loop (one thread). The feeds' HTTP client runs on it too:
    /// neither ever blocks it.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let partition: Partition
    private let events: ControlEvents
    /// Where clients' commands run; the web server's WebSocket clients use it too.
    let scheduler: PartitionScheduler
    private let logger: Logger
    /// The clients served at once (`--max-clients`), over every listener.
    let clients: ClientLimit

    init(partition: Partition, events: ControlEvents, clients: ClientLimit, logger: Logger) {
        self.partition = partition
        self.events = events
        self.clients = clients
        self.logger = logger
        scheduler = PartitionScheduler(partition: partition, gate: ExpensiveCommandGate(partition: partition))
    }

    /// The default socket path: `$XDG_RUNTIME_DIR/queueplayerd.sock`, or a private
    /// per-user directory under /tmp when the variable is unset.
    static func defaultPath() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/queueplayerd.sock"
        }
        return "/tmp/queueplayerd-\(getuid())/queueplayerd.sock"
    }

    /// Starts listening; returns a description of where. Awaits the bind on the event loop
    /// (never blocks the caller's thread).
    @discardableResult
    func start(path: String) async throws -> String {
        let bootstrap = ServerBootstrap(group: group)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 256 * 1024))
            // One bounded read per connection per turn of the loop: fairness between clients.
            // The high water mark is where a client's unread replies stop its commands (ControlConnection).
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
            .childChannelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: ControlConnection.readSize))
            .childChannelInitializer { [partition, events, scheduler, logger, clients] channel in
                guard clients.admit() else {
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in clients.release() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ControlConnection(partition: partition, events: events, scheduler: scheduler, logger: logger))
                }
            }
        // Accepting that fails for want of descriptors refuses the waiting clients instead of
        // being retried on every turn of the loop (``AcceptFailureHandler``): it needs the
        // listening descriptor, so the socket is made here and handed to NIO.
        let fd: Int32
        let location: String
        if let passed = Self.socketFromSystemd() {
            (fd, location) = (passed, "the socket passed by systemd (fd \(passed))")
        } else {
            try Self.prepare(path)
            fd = try Self.listen(on: path)
            location = path
        }
        let (logger, clients) = (logger, clients)
        do {
            _ = try await bootstrap
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            AcceptFailureHandler(listeningSocket: fd, logger: logger) { clients.connected })
                    }
                }
                .withBoundSocket(fd).get()
        } catch {
            throw SetupError(description: "cannot listen on \(location): \(error)")
        }
        return location
    }

    /// A Unix stream socket bound at `path` (mode 0600) and listening.
    private static func listen(on path: String) throws -> Int32 {
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
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SetupError(description: "cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o600)
        return fd
    }

    /// Closes the socket and every client's connection, and stops the event loop.
    func shutdown() async throws {
        try await group.shutdownGracefully()
    }

    // MARK: - Private

    /// fd 3 when systemd passed exactly this process a socket (sd_listen_fds).
    private static func socketFromSystemd() -> Int32? {
        let environment = ProcessInfo.processInfo.environment
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return 3
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

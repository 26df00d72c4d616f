import DaemonCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The control server: Unix and TCP stream sockets speaking the MPD protocol.
///
/// It listens on the sockets systemd passes (`LISTEN_FDS`/`LISTEN_PID`, fds 3...), or binds
/// its addresses itself (``ListeningSockets``). Every listener's clients count against one
/// ``ClientLimit`` and get their permissions from one ``AccessPolicy``.
package final class ControlServer: Sendable {
    /// The control socket's event loop (one thread). The feeds' HTTP client runs on it too:
    /// neither ever blocks it.
    let group: MultiThreadedEventLoopGroup
    /// What each client's connection uses of the daemon.
    private let environment: ClientEnvironment
    private let logger: Logger
    /// The clients served at once (`--max-clients`), over every listener.
    let clients: ClientLimit
    /// What each client may do, by where it connects from.
    private let access: AccessPolicy
    /// The socket files this server bound itself, removed at ``shutdown()`` (a socket systemd
    /// passed is systemd's). Written by ``start(_:optional:)``, read by ``shutdown()``.
    private let boundFiles = Mutex<[ListeningSockets.SocketFile]>([])
    /// Seconds a client may send no complete command (`--connection-timeout`).
    private let timeout: Double

    /// - Parameter group: the event loop the server and its clients run on (one thread), made
    ///   before the server because the feeds' HTTP client runs on it too; shut down with the server.
    package init(group: MultiThreadedEventLoopGroup, environment: ClientEnvironment, clients: ClientLimit,
         timeout: Double = ControlConnection.defaultTimeout, logger: Logger) {
        self.group = group
        access = environment.runner.access
        self.timeout = timeout
        self.environment = environment
        self.clients = clients
        self.logger = logger
    }

    /// The default socket path: `$XDG_RUNTIME_DIR/queueplayerd.sock`, or a private
    /// per-user directory under /tmp when the variable is unset.
    package static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/queueplayerd.sock"
        }
        return "/tmp/queueplayerd-\(getuid())/queueplayerd.sock"
    }

    /// Starts listening on `addresses`, or on the sockets systemd passed (which replace them);
    /// returns what listens. `optional` addresses (the conventional `localhost:6600` added when
    /// no `--bind` is given) that are taken by another program are left out with a warning
    /// rather than stopping the daemon. Awaits each bind on the event loop (never blocks the
    /// caller's thread); if one fails, those already listening are closed with the group.
    @discardableResult
    package func start(_ addresses: [ListenAddress], optional: Set<ListenAddress> = []) async throws -> [ListeningSockets.Socket] {
        var sockets: [ListeningSockets.Socket] = []
        if let passed = ListeningSockets.passedBySystemd() {
            sockets = passed
        } else {
            do {
                for address in addresses {
                    switch address {
                    case .unix(let path):
                        sockets.append(try ListeningSockets.unix(at: path))
                        if let file = ListeningSockets.SocketFile(path: path) { boundFiles.withLock { $0.append(file) } }
                    case .tcp:
                        do {
                            sockets += try ListeningSockets.tcp(address)
                        } catch let error as ListeningSockets.SetupError where error.isAddressInUse && optional.contains(address) {
                            logger.warning("\(error.description) (another mpd?): clients reach this daemon on its other listeners only")
                        }
                    }
                }
            } catch {
                for socket in sockets { close(socket.fd) }
                throw error
            }
        }
        for (index, socket) in sockets.enumerated() {
            do {
                try await listen(on: socket)
            } catch {
                for unbound in sockets[(index + 1)...] { close(unbound.fd) }
                throw ListeningSockets.SetupError(description: "cannot listen on \(socket.description): \(error)")
            }
        }
        return sockets
    }

    /// Hands one listening socket to NIO: its clients are admitted against the shared
    /// ``ClientLimit`` and start with the permissions ``AccessPolicy`` gives their peer.
    private func listen(on socket: ListeningSockets.Socket) async throws {
        let bootstrap = ServerBootstrap(group: group)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 256 * 1024))
            // One bounded read per connection per turn of the loop: fairness between clients.
            // The high water mark is where a client's unread replies stop its commands (ControlConnection).
            .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 1)
            .childChannelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: ControlConnection.readSize))
            // A client that shuts down its sending side still gets the replies to what it sent
            // (ControlConnection answers them, then closes).
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [environment, logger, clients, access, timeout] channel in
                let local = socket.isUnix
                guard clients.admit(local: local) else {
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in clients.release(local: local) }
                let remote = socket.isUnix ? nil : channel.remoteAddress
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ControlConnection(environment: environment, logger: logger,
                                          permissions: access.permissions(forPeer: remote),
                                          peer: AccessPolicy.peerName(remote), isLocal: socket.isUnix, timeout: timeout))
                }
            }
        // Accepting that fails for want of descriptors refuses the waiting clients instead of
        // being retried on every turn of the loop (``AcceptFailureHandler``): it needs the
        // listening descriptor, so the socket is made by ``ListeningSockets`` and handed to NIO.
        let (logger, clients, fd) = (logger, clients, socket.fd)
        _ = try await bootstrap
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptFailureHandler(listeningSocket: fd, logger: logger) { clients.connected })
                }
            }
            .withBoundSocket(fd).get()
    }

    /// Closes the socket and every client's connection, stops the event loop, and removes the
    /// socket files it bound, so that a script waiting for the socket to appear is not fooled by
    /// a stale one.
    package func shutdown() async throws {
        defer {
            for file in boundFiles.withLock({ $0 }) { file.removeIfUnchanged() }
        }
        try await group.shutdownGracefully()
    }
}

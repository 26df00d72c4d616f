import DaemonCore
import Logging
import NIOCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the control socket does when accepting fails because the process has no descriptor
/// left (`EMFILE`, `ENFILE`): it refuses the waiting clients instead of spinning.
///
/// swift-nio leaves the listening socket registered for reading after a failed accept, so
/// with clients waiting in the backlog every turn of the event loop tries again and fails
/// again: a core spent for as long as the crowd stays. This handler keeps one descriptor in
/// reserve (`/dev/null`, opened at start); on such a failure it gives it up, accepts each
/// waiting client and closes it at once (the client sees its connection closed, not a hang),
/// and takes the reserve back. The backlog empties, the loop sleeps, and once descriptors are
/// free again clients are served as before. The log says so at most once a minute.
final class AcceptFailureHandler: ChannelInboundHandler {
    typealias InboundIn = Any

    private let listeningSocket: Int32
    private let logger: Logger
    private let connected: @Sendable () -> Int
    private var reserve: Int32 = -1
    private var lastWarning = -Double.infinity
    private var refusedSinceWarning = 0

    /// - Parameters:
    ///   - listeningSocket: the descriptor the server channel accepts on.
    ///   - connected: how many clients are connected, for the log line.
    init(listeningSocket: Int32, logger: Logger, connected: @escaping @Sendable () -> Int) {
        self.listeningSocket = listeningSocket
        self.logger = logger
        self.connected = connected
        reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if reserve >= 0 { close(reserve) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE else {
            context.fireErrorCaught(error)
            return
        }
        refusedSinceWarning += refuseWaitingClients()
        let now = monotonicSeconds()
        if now - lastWarning >= 60 {
            logger.warning("cannot accept a client: no file descriptor left (\(connected()) clients connected); refused \(refusedSinceWarning) waiting client\(refusedSinceWarning == 1 ? "" : "s") until descriptors are free again")
            lastWarning = now
            refusedSinceWarning = 0
        }
    }

    /// Accepts and closes every client waiting in the backlog, with the reserve descriptor
    /// given up for it; returns how many.
    private func refuseWaitingClients() -> Int {
        if reserve >= 0 {
            close(reserve)
            reserve = -1
        }
        var refused = 0
        while refused < 1024 {
            let client = accept(listeningSocket, nil, nil)
            guard client >= 0 else { break }
            close(client)
            refused += 1
        }
        reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return refused
    }
}

import DaemonCore
import Logging
import Synchronization

/// The most clients the daemon serves at once, counted over every listener (mpd's
/// `max_connections`, 100 by default): a client over it is closed at once, and the log says
/// so at most once a second (a crowd must not flood the journal either).
///
/// One per daemon: the control socket's connections take a place each, and so will any
/// other listener's (the WebSocket clients to come), so one crowd cannot starve another.
///
/// The Unix socket (0600: the daemon's owner) always has a place: while no client of it is
/// connected, one is admitted even when the TCP clients hold every place, one over the
/// maximum, so that a crowd on the network never shuts the owner out.
package final class ClientLimit: Sendable {
    /// mpd's default `max_connections`.
    package static let defaultMaximum = 100

    let maximum: Int
    private let logger: Logger
    private struct Counts {
        var connected = 0
        /// Of those, the Unix socket's.
        var local = 0
        /// Refused since the last log line, and when that line was written (seconds, monotonic).
        var refusedSinceLog = 0
        var lastLog = -Double.infinity
    }
    private let counts = Mutex(Counts())

    package init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    /// Takes a place for a new client, `local` if it came through the Unix socket; false when
    /// every place is taken (the client is then to be closed without a word, as mpd does).
    func admit(local: Bool = false, now: Double = monotonicSeconds()) -> Bool {
        let (admitted, report) = counts.withLock { counts -> (Bool, Int?) in
            if counts.connected < maximum || (local && counts.local == 0) {
                counts.connected += 1
                if local { counts.local += 1 }
                return (true, nil)
            }
            counts.refusedSinceLog += 1
            guard now - counts.lastLog >= 1 else { return (false, nil) }
            defer {
                counts.refusedSinceLog = 0
                counts.lastLog = now
            }
            return (false, counts.refusedSinceLog)
        }
        if let report {
            logger.warning("\(maximum) clients connected, the most allowed (--max-clients): refused \(report) new client\(report == 1 ? "" : "s")")
        }
        return admitted
    }

    /// Gives back the place of a client that went away (`local` as it was admitted).
    func release(local: Bool = false) {
        counts.withLock { counts in
            counts.connected -= 1
            if local { counts.local -= 1 }
        }
    }

    /// Clients connected now.
    var connected: Int { counts.withLock { $0.connected } }
}

import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Every request's access check on the web port (pages and WebSocket upgrades alike), from its
/// head as the decoder gives it (``HTTPRequestGuard`` asks): ``WebAccess``'s verdict as a
/// refusal, 401 without the right token and 403 for another host or site. A request without the
/// right token is logged (never what it offered) and its answer waits as
/// ``TokenFailureSchedule`` says, so that the token cannot be guessed at the port's speed; a
/// request with the right token is never held up.
final class WebAccessGate: Sendable {
    let access: WebAccess
    private let failures = Mutex(TokenFailureSchedule())
    private let logger: Logger

    init(access: WebAccess, logger: Logger) {
        self.access = access
        self.logger = logger
    }

    func refusal(for head: HTTPRequestHead, peer: SocketAddress?) -> HTTPRequestGuard.Refusal? {
        let target = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let cookies = head.headers["cookie"]
        let request = WebAccess.Request(host: head.headers["host"].first, origin: head.headers["origin"].first,
                                        authorization: head.headers["authorization"].first,
                                        cookie: cookies.isEmpty ? nil : cookies.joined(separator: "; "),
                                        query: target.count > 1 ? String(target[1]) : nil,
                                        isWebSocketUpgrade: HTTPRequestGuard.isWebSocketUpgrade(head))
        let what = request.isWebSocketUpgrade ? "a WebSocket" : "a request"
        switch access.check(request) {
        case .allowed:
            return nil
        case .badToken:
            let now = Double(NIODeadline.now().uptimeNanoseconds) / 1e9
            let (delay, count) = failures.withLock { schedule in (schedule.delay(failureAt: now), schedule.count) }
            logger.notice("""
                web: refused \(what) from \(Self.name(peer)) without the right token \
                (\(count) so refused since start; answered after \(Int(delay * 1000)) ms)
                """)
            return HTTPRequestGuard.Refusal(status: .unauthorized, reason: "a token is required (--http-token-file)",
                                            delay: .nanoseconds(Int64(delay * 1e9)))
        case .badHost:
            logger.notice("web: refused \(what) for host \(request.host ?? "none") from \(Self.name(peer))")
            return HTTPRequestGuard.Refusal(status: .forbidden, reason: "not served to this host name")
        case .badOrigin:
            logger.notice("web: refused a WebSocket from origin \(request.origin ?? "none") (\(Self.name(peer)))")
            return HTTPRequestGuard.Refusal(status: .forbidden, reason: "not served to another site's page")
        }
    }

    private static func name(_ peer: SocketAddress?) -> String {
        peer?.ipAddress ?? "an unknown address"
    }
}

/// When to answer the requests that came without the right token: the first ``burst`` at once,
/// then one every ``interval`` however many come at once and over however many connections (a
/// token bucket), none later than ``maximumDelay`` after it came (the wait holds a connection
/// open, and the port takes ``WebServer/maximumConnections``). Guessing then runs at about four
/// a second, where it ran at thousands.
struct TokenFailureSchedule: Sendable {
    var interval = 0.25
    var burst = 10.0
    var maximumDelay = 5.0
    /// Failures so far.
    private(set) var count = 0
    /// When the failures so far would all have been answered, one every `interval`.
    private var busyUntil = -Double.infinity

    /// How long to hold the answer to a failure that came at `now` (seconds on a monotonic clock).
    mutating func delay(failureAt now: Double) -> Double {
        count += 1
        busyUntil = max(busyUntil, now) + interval
        let delay = busyUntil - burst * interval - now
        if delay > maximumDelay {
            busyUntil = now + maximumDelay + burst * interval
            return maximumDelay
        }
        return max(delay, 0)
    }
}

import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// Every request's access check on the web port (pages and WebSocket upgrades alike), from its
/// head as the decoder gives it (``HTTPRequestGuard`` asks): ``WebAccess``'s verdict as a
/// refusal, 401 without the right token and 403 for another host or site.
final class WebAccessGate: Sendable {
    let access: WebAccess
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
            return HTTPRequestGuard.Refusal(status: .unauthorized, reason: "a token is required (--http-token-file)")
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

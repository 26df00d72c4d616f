import DaemonCore
import Foundation

/// Who may use the web page and the WebSocket API (docs/websocket.md, "Security"). Pure: every request's
/// and every upgrade's headers go through ``check(_:)``, and the tests call it directly.
///
/// * Host: on a loopback bind the `Host` header must name loopback (`localhost`, `127.x.x.x`,
///   `[::1]`). A page on another site cannot then reach the daemon by rebinding its own name to
///   127.0.0.1 (DNS rebinding): the browser would send that site's name as the Host.
/// * Token: with `--http-token-file` (required for a bind other than loopback), every request
///   carries it, as `Authorization: Bearer TOKEN`, a `token` query parameter, or the cookie the
///   page gets when it is first opened with `?token=`. Compared in constant time.
/// * Origin (WebSocket upgrades only): absent (a program, not a page), or the page's own,
///   `http://` + the request's Host. A page on another site must not drive the player through
///   the user's browser, which sends its cookies along and does not apply the same-origin rule
///   to WebSockets.
struct WebAccess: Sendable {
    /// The bind, for the Host check.
    let address: HTTPListenAddress
    /// The token requests must carry; nil: none is asked for (loopback only).
    let token: String?

    /// The cookie that carries the token for the page's own requests.
    static let cookieName = "queueplayerd_token"

    /// What a request brings that access depends on.
    struct Request: Sendable {
        var host: String?
        var origin: String?
        var authorization: String?
        var cookie: String?
        /// The query string, without `?`.
        var query: String?
        var isWebSocketUpgrade: Bool
    }

    enum Verdict: Equatable, Sendable {
        case allowed
        /// 403: the Host is not one a loopback bind answers to.
        case badHost
        /// 401: no token, or the wrong one.
        case badToken
        /// 403: a WebSocket upgrade from another site's page.
        case badOrigin
    }

    func check(_ request: Request) -> Verdict {
        if address.isLoopback, !Self.isLoopbackHost(request.host) { return .badHost }
        if let token, !carriesToken(token, request) { return .badToken }
        if request.isWebSocketUpgrade, let origin = request.origin, !isOwnOrigin(origin, host: request.host) {
            return .badOrigin
        }
        return .allowed
    }

    /// The token given as a query parameter, if any (the page's first load sets the cookie from it).
    static func queryToken(_ query: String?) -> String? {
        guard let query else { return nil }
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "token" {
                return String(parts[1]).removingPercentEncoding ?? String(parts[1])
            }
        }
        return nil
    }

    private func carriesToken(_ token: String, _ request: Request) -> Bool {
        var offered: [String] = []
        if let authorization = request.authorization, authorization.hasPrefix("Bearer ") {
            offered.append(String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        }
        if let fromQuery = Self.queryToken(request.query) { offered.append(fromQuery) }
        if let cookie = request.cookie {
            for part in cookie.split(separator: ";") {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0] == Self.cookieName { offered.append(String(pair[1])) }
            }
        }
        return offered.contains { Self.constantTimeEqual($0, token) }
    }

    private func isOwnOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        return origin.lowercased() == "http://" + host.lowercased()
    }

    /// `localhost`, `127.x.x.x` or `[::1]`, with or without a port.
    static func isLoopbackHost(_ host: String?) -> Bool {
        guard let host = host?.lowercased(), !host.isEmpty else { return false }
        var name = Substring(host)
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        return HTTPListenAddress(host: String(name), port: 0).isLoopback
    }

    /// Compares without stopping at the first difference, so the time taken does not tell how
    /// much of a guess was right.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}

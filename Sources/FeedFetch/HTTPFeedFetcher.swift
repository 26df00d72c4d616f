import AsyncHTTPClient
import Feeds
import Foundation
import LazyHTTP
import NIOCore
import NIOHTTP1

/// ``FeedFetching`` over HTTP(S) with AsyncHTTPClient, on an event loop group the daemon
/// already runs (the control socket's): no thread of its own. The client is made at the first
/// fetch (``LazyHTTPClient``): a daemon that fetches nothing never enters the HTTP stack.
///
/// Redirects are followed here, not by the client, because a feed must tell them apart: a
/// permanent one (301, 308) from the requested URL on moves the subscription, a temporary
/// one (302, 303, 307) does not. The whole fetch, body included, has `request.timeout`
/// seconds (the client's own deadline ends at the response head, so a server that sends
/// its body one byte a second would otherwise hold a fetch for ever), and the body is
/// refused at the chunk that passes the cap (``FeedBody``).
public final class HTTPFeedFetcher: FeedFetching {
    /// More than this many redirects in one fetch is a loop or a misconfigured site.
    static let maximumRedirects = 5
    static let userAgent = "queueplayerd (podcast feeds)"

    private let client: LazyHTTPClient

    /// Runs its connections on `eventLoopGroup`; call ``shutdown()`` before the group goes (it
    /// does nothing if nothing was fetched).
    public init(eventLoopGroup: any EventLoopGroup) {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10))
        configuration.decompression = .disabled
        client = LazyHTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
    }

    /// Ends the client's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    public func fetch(_ request: FeedRequest) async -> FeedResponse {
        let timeout = request.timeout
        let timedOut = FeedResponse.failed("no complete response within \(Self.format(timeout)) s", retryAfter: nil)
        do {
            return try await withThrowingTaskGroup(of: FeedResponse?.self) { group in
                group.addTask { try await self.fetchFollowingRedirects(request) }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(max(0, timeout) * 1e9))
                    return nil
                }
                defer { group.cancelAll() }
                if let first = try await group.next(), let response = first { return response }
                // Out of time. A fetch that never connected ends, once cancelled, with the last
                // connection error (a refused connection is retried until then): it says more.
                group.cancelAll()
                do {
                    while let next = try await group.next() {
                        if let response = next { return response }
                    }
                } catch let error as IOError {
                    return .failed(Self.describe(error, timeout: timeout), retryAfter: nil)
                } catch {}
                return timedOut
            }
        } catch let error as FeedError {
            return .failed(error.description, retryAfter: nil)
        } catch is CancellationError {
            return .failed("cancelled", retryAfter: nil)
        } catch {
            return .failed(Self.describe(error, timeout: timeout), retryAfter: nil)
        }
    }

    private func fetchFollowingRedirects(_ request: FeedRequest) async throws -> FeedResponse {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(max(0, request.timeout) * 1e9))
        var url = request.url
        var permanentURL: URL?
        var stillPermanent = true
        for _ in 0...Self.maximumRedirects {
            var outgoing = HTTPClientRequest(url: url.absoluteString)
            outgoing.headers.add(name: "User-Agent", value: Self.userAgent)
            outgoing.headers.add(name: "Accept", value: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1")
            if let tag = request.validators.entityTag { outgoing.headers.add(name: "If-None-Match", value: tag) }
            if let date = request.validators.lastModified { outgoing.headers.add(name: "If-Modified-Since", value: date) }
            let response = try await client.client().execute(outgoing, deadline: deadline)
            let code = Int(response.status.code)
            switch code {
            case 301, 302, 303, 307, 308:
                guard let location = response.headers.first(name: "Location"),
                      let next = URL(string: location, relativeTo: url)?.absoluteURL,
                      let scheme = next.scheme?.lowercased(), scheme == "http" || scheme == "https"
                else {
                    return .failed("HTTP \(code) without a usable Location", retryAfter: nil)
                }
                if stillPermanent && (code == 301 || code == 308) { permanentURL = next } else { stillPermanent = false }
                url = next
            case 304:
                return .notModified(permanentURL: permanentURL, validators: Self.validators(response.headers))
            case 200:
                if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > request.maximumBodySize {
                    throw FeedError.bodyTooLarge(limit: request.maximumBodySize)
                }
                var body = FeedBody(limit: request.maximumBodySize)
                for try await chunk in response.body {
                    try body.append(chunk.readableBytesView)
                }
                // A cancelled body stream just ends: what came is not the whole feed.
                try Task.checkCancellation()
                return .body(body.data, finalURL: url, permanentURL: permanentURL, validators: Self.validators(response.headers))
            default:
                var why = "HTTP \(code) \(response.status.reasonPhrase)"
                var retryAfter: Double?
                if code == 429 || code == 503, let header = response.headers.first(name: "Retry-After") {
                    retryAfter = RetryAfter.seconds(header, now: Date())
                    if let retryAfter { why += ", retry after \(Self.format(retryAfter)) s" }
                }
                return .failed(why, retryAfter: retryAfter)
            }
        }
        return .failed("more than \(Self.maximumRedirects) redirects", retryAfter: nil)
    }

    private static func validators(_ headers: HTTPHeaders) -> FeedValidators {
        FeedValidators(entityTag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
    }

    /// One line for a log: the client's errors describe themselves tersely.
    private static func describe(_ error: any Error, timeout: Double) -> String {
        if let error = error as? IOError {
            // "connection reset (error set): Connection refused (errno: 111)" says less than this.
            return "connection failed: \(String(cString: strerror(error.errnoCode)))"
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection within 10 s"
            case .deadlineExceeded: return "no complete response within \(format(timeout)) s"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: return "\(error)"
            }
        }
        return "\(error)"
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}

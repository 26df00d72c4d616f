import Foundation

/// The network seam of background fetch: one conditional GET of one feed, from request to
/// a ``FeedResponse``, whatever went wrong on the way.
///
/// ``BackgroundFetcher`` decides when to fetch and what to keep; an implementation only
/// talks HTTP (``HTTPFeedFetcher``), so the scheduling and merging can be tested with a fake
/// that answers at once, and the HTTP part against a real server.
public protocol FeedFetching: Sendable {
    /// Fetches `request.url`. Never throws: every failure is a ``FeedResponse/failed(_:retryAfter:)``.
    /// Returns soon after the calling task is cancelled.
    func fetch(_ request: FeedRequest) async -> FeedResponse
}

/// One conditional GET of a feed.
public struct FeedRequest: Sendable, Equatable {
    /// Where the feed is now (after permanent redirects).
    public var url: URL
    /// The validators of the last response that was read: sent as `If-None-Match` and
    /// `If-Modified-Since`, so an unchanged feed costs one 304.
    public var validators: FeedValidators
    /// Seconds the whole fetch may take, body included.
    public var timeout: Double
    /// The most bytes the body may have.
    public var maximumBodySize: Int

    public init(url: URL, validators: FeedValidators, timeout: Double, maximumBodySize: Int) {
        self.url = url
        self.validators = validators
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
    }
}

/// An HTTP response's `ETag` and `Last-Modified`, kept per feed between fetches.
public struct FeedValidators: Codable, Sendable, Equatable {
    public var entityTag: String?
    public var lastModified: String?

    public init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

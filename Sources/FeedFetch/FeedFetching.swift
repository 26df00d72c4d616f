
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

import Feeds
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What is kept of one subscription between fetches and across restarts: where it is
/// fetched from now, the validators for a conditional GET, the episodes known, and how the
/// last fetch went.
public struct FeedRecord: Codable, Sendable, Equatable {
    /// The URL as subscribed (`--feed`, the feeds file): the key the record is found by,
    /// even after the feed moved.
    public var subscription: URL
    /// The feed's title and episodes; its `url` is where it is fetched from now (after 301/308).
    public var state: FeedState
    /// The last response's `ETag` and `Last-Modified`.
    public var validators: FeedValidators
    /// When the last fetch ended (wall clock: the interval holds across restarts).
    public var lastFetched: Date?
    /// The last fetch's result, as logged (`newData (2 new episodes)`, `noData`, `failed (why)`).
    public var lastResult: String?

    public init(subscription: URL) {
        self.subscription = subscription
        state = FeedState(url: subscription)
        validators = FeedValidators()
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

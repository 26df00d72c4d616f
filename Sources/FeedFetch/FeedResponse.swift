#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How one HTTP fetch of a feed ended: a body to parse, "not modified", or a failure with
/// the reason a user can act on.
public enum FeedResponse: Sendable, Equatable {
    /// A 200 with its whole body. `finalURL` is where the body came from (the base for
    /// relative URLs); `permanentURL` is set when the feed moved for good (301/308 from the
    /// requested URL on), and is where to fetch it from now on.
    case body(Data, finalURL: URL, permanentURL: URL?, validators: FeedValidators)
    /// A 304: the feed is as it was. Validators the 304 carried replace the old ones.
    case notModified(permanentURL: URL?, validators: FeedValidators)
    /// No feed: no answer, a time-out, an HTTP error, a body over the cap. `retryAfter` is
    /// the server's `Retry-After` in seconds (429, 503), when it gave one.
    case failed(String, retryAfter: Double?)
}

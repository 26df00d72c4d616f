#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A feed body as it arrives, chunk by chunk, refused as soon as it would pass the cap.
///
/// The cap has to hold while the body streams in, not after: a server that sends 100 MiB
/// (or never stops) must cost at most the cap in memory. The HTTP client appends each chunk
/// and stops reading at the first throw.
public struct FeedBody: Sendable {
    /// The most bytes the body may have.
    public let limit: Int
    /// What has arrived, never more than `limit` bytes.
    public private(set) var data = Data()

    public init(limit: Int = FeedParser.defaultMaximumBodySize) {
        self.limit = limit
    }

    /// Adds `chunk`, or throws `bodyTooLarge` and keeps what was there if it would pass `limit`.
    public mutating func append(_ chunk: some Collection<UInt8>) throws(FeedError) {
        guard chunk.count <= limit - data.count else { throw .bodyTooLarge(limit: limit) }
        data.append(contentsOf: chunk)
    }
}

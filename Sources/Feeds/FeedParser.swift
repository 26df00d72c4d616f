#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The entry point for a fetched feed body: untrusted bytes in, a `Feed` or a `FeedError` out.
///
/// The checks run cheapest first and each before anything it protects: the size cap before
/// a byte is looked at, the prologue check (HTML, entity declarations) before the XML
/// parser, the parser with external entities off. Nothing here touches the network or the
/// file system; the caller fetched the bytes (through `FeedBody`, which caps them as they
/// arrive) and decides what to keep (`FeedState.merge(known:fetched:)`).
public struct FeedParser: Sendable {
    /// 16 MiB: the largest real podcast feeds (thousands of episodes with show notes) are a
    /// few MiB; more than this is a mistake or an attack, and costs memory to hold.
    public static let defaultMaximumBodySize = 16 << 20

    /// The largest body `parse` accepts, in bytes.
    public var maximumBodySize: Int

    public init(maximumBodySize: Int = FeedParser.defaultMaximumBodySize) {
        self.maximumBodySize = maximumBodySize
    }

    /// The feed in `body`, fetched from `url` (the base for relative enclosure URLs; give the
    /// URL after redirects).
    public func parse(_ body: Data, from url: URL) throws(FeedError) -> Feed {
        guard body.count <= maximumBodySize else { throw .bodyTooLarge(limit: maximumBodySize) }
        try DocumentPrologue.check(body)
        return try FeedReader.read(body, baseURL: url)
    }
}

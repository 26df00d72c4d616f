#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One downloadable item of a feed: an RSS `<item>` or an Atom `<entry>` with an enclosure.
public struct Episode: Identifiable, Codable, Equatable, Sendable {
    /// The episode's identity across fetches: its GUID (RSS `<guid>`, Atom `<id>`), or the
    /// enclosure's absolute URL when it has none, as podcast clients have always done.
    public var id: String
    /// The item's title, whitespace collapsed; nil if it has none.
    public var title: String?
    /// The audio file.
    public var enclosure: Enclosure
    /// RSS `<pubDate>`, or Atom `<published>` (else `<updated>`).
    public var published: Date?
    /// `itunes:duration`, when present and readable.
    public var duration: Duration?
    /// The episode's chapters file (`<podcast:chapters url="..." type="application/json+chapters"/>`),
    /// fetched beside the audio by the downloads.
    public var chapters: URL?

    public init(id: String, title: String?, enclosure: Enclosure, published: Date? = nil, duration: Duration? = nil,
                chapters: URL? = nil) {
        self.id = id
        self.title = title
        self.enclosure = enclosure
        self.published = published
        self.duration = duration
        self.chapters = chapters
    }
}

/// An episode's media file as the feed announces it. `length` and `type` are the feed's
/// claims, not facts: a download checks what actually arrives.
public struct Enclosure: Codable, Equatable, Sendable {
    /// Absolute, http or https: relative URLs are resolved against the feed, anything else
    /// (a `file:` URL, say) is refused by the parser, since a feed is untrusted input.
    public var url: URL
    /// The announced size in bytes; nil when absent, zero or not a number.
    public var length: Int64?
    /// The announced MIME type, e.g. `audio/mpeg`.
    public var type: String?

    public init(url: URL, length: Int64? = nil, type: String? = nil) {
        self.url = url
        self.length = length
        self.type = type
    }
}

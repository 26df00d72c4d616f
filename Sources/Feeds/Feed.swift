
/// One fetch of a podcast feed, as parsed: what the feed says now, nothing remembered.
///
/// A value, so that parsing (untrusted bytes in) and merging (what is known, kept across
/// fetches) stay separate steps: `FeedState.merge(known:fetched:)` decides what is new.
public struct Feed: Equatable, Sendable {
    /// The channel's (RSS) or feed's (Atom) title, whitespace collapsed; nil if it has none.
    public var title: String?
    /// The items that carry a usable enclosure, in the feed's order, each identity once.
    public var episodes: [Episode]
    /// Items left out: no enclosure, an enclosure that is not http(s), no identity, or an
    /// identity seen earlier in the same feed. Counted so that a log line can say so.
    public var skippedItems: Int

    public init(title: String?, episodes: [Episode], skippedItems: Int = 0) {
        self.title = title
        self.episodes = episodes
        self.skippedItems = skippedItems
    }
}

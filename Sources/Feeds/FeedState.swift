#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the daemon knows of one subscribed feed across fetches: its title and every episode
/// it has ever listed, whether or not the feed still does.
///
/// Merging is a pure step of its own so that the rules users of other podcast clients
/// complain about most can be stated and tested without a network: a failed fetch loses
/// nothing, and an episode never appears twice because the feed moved its file or
/// rewrote its GUIDs.
public struct FeedState: Codable, Equatable, Sendable {
    /// The subscription's URL (after permanent redirects).
    public var url: URL
    /// The feed's title as last read.
    public var title: String?
    /// The known episodes: in the order first seen, updated in place when the feed changes them.
    public var episodes: [Episode]

    public init(url: URL, title: String? = nil, episodes: [Episode] = []) {
        self.url = url
        self.title = title
        self.episodes = episodes
    }

    /// The state after a fetch, the episodes it brought that were not known, and the fetch's result.
    public struct Update: Equatable, Sendable {
        public var state: FeedState
        public var newEpisodes: [Episode]
        public var result: FetchResult
    }

    /// `known` updated with `fetched`.
    ///
    /// - A failed fetch leaves `known` as it is (`failed`).
    /// - A fetched episode whose identity (GUID) is known updates that episode in place,
    ///   enclosure URL included: a feed that moves its files to another host does not
    ///   double its episodes.
    /// - A fetched episode with an unknown identity but the enclosure URL of a known one is
    ///   that episode under a new identity (a feed that rewrote its GUIDs, or gave an
    ///   episode without one a GUID); it takes the new identity, and is not new.
    /// - Known episodes the feed no longer lists stay known (feeds list only their latest).
    public static func merge(known: FeedState, fetched: Result<Feed, FeedError>) -> Update {
        let feed: Feed
        switch fetched {
        case .failure(let error): return Update(state: known, newEpisodes: [], result: .failed(error))
        case .success(let value): feed = value
        }
        var state = known
        state.title = feed.title ?? known.title
        var indexByIdentity = Dictionary(known.episodes.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var indexByEnclosure = Dictionary(known.episodes.enumerated().map { ($1.enclosure.url, $0) }, uniquingKeysWith: { first, _ in first })
        // Known episodes this fetch has already matched: a second fetched item cannot claim one.
        var matched = Set<Int>()
        var new: [Episode] = []
        for episode in feed.episodes {
            let index = indexByIdentity[episode.id] ?? indexByEnclosure[episode.enclosure.url]
            guard let index else {
                indexByIdentity[episode.id] = state.episodes.count
                indexByEnclosure[episode.enclosure.url] = state.episodes.count
                matched.insert(state.episodes.count)
                state.episodes.append(episode)
                new.append(episode)
                continue
            }
            // A second item for an episode this fetch already matched: the same audio twice.
            guard matched.insert(index).inserted else { continue }
            indexByIdentity[episode.id] = index
            indexByEnclosure[episode.enclosure.url] = index
            state.episodes[index] = episode
        }
        return Update(state: state, newEpisodes: new, result: new.isEmpty ? .noData : .newData(new.count))
    }
}

import Feeds
import Foundation
import Testing

/// What is kept across fetches: nothing lost on failure, nothing doubled by a moved file or rewritten GUIDs.
@Suite struct FeedStateMergeTests {
    let feedURL = URL(string: "https://feeds.example.com/moving/feed.xml")!

    func episode(_ id: String, _ file: String, title: String? = nil) -> Episode {
        Episode(id: id, title: title ?? id, enclosure: Enclosure(url: URL(string: "https://cdn.example.com/\(file)")!))
    }

    @Test func theFirstFetchMakesEveryEpisodeNew() throws {
        let update = FeedState.merge(known: FeedState(url: feedURL), fetched: try Fixture.parse("changed-enclosure-before.xml"))
        #expect(update.result == .newData(1))
        #expect(update.state.title == "Moving Host")
        #expect(update.newEpisodes.map(\.id) == ["moving-host-1"])
    }

    @Test func aChangedEnclosureURLWithTheSameGUIDIsNoDuplicate() throws {
        let first = FeedState.merge(known: FeedState(url: feedURL), fetched: try Fixture.parse("changed-enclosure-before.xml"))
        let second = FeedState.merge(known: first.state, fetched: try Fixture.parse("changed-enclosure-after.xml"))
        #expect(second.state.episodes.map(\.id) == ["moving-host-1", "moving-host-2"])
        #expect(second.newEpisodes.map(\.id) == ["moving-host-2"])
        #expect(second.result == .newData(1))
        let pilot = second.state.episodes[0]
        #expect(pilot.enclosure.url.absoluteString == "https://new-cdn.example.com/pilot.mp3", "updated in place")
        #expect(pilot.title == "Pilot (remastered)")
    }

    @Test func aFailedFetchKeepsTheEpisodesAlreadyKnown() throws {
        let known = FeedState.merge(known: FeedState(url: feedURL), fetched: try Fixture.parse("changed-enclosure-before.xml")).state
        let update = FeedState.merge(known: known, fetched: try Fixture.parse("stray-ampersand.xml"))
        #expect(update.state == known)
        #expect(update.newEpisodes.isEmpty)
        guard case .failed(.malformed(line: 4, _, _)) = update.result else {
            Issue.record("expected failed(malformed at line 4), got \(update.result)")
            return
        }
        #expect(update.result.description.hasPrefix("failed (not well-formed XML at line 4"))
    }

    @Test func theSameFeedAgainIsNoData() throws {
        let first = FeedState.merge(known: FeedState(url: feedURL), fetched: try Fixture.parse("changed-enclosure-after.xml"))
        let again = FeedState.merge(known: first.state, fetched: try Fixture.parse("changed-enclosure-after.xml"))
        #expect(again.result == .noData)
        #expect(again.state == first.state)
    }

    @Test func rewrittenGUIDsWithTheSameFilesAreNoDuplicates() {
        let known = FeedState(url: feedURL, episodes: [episode("old-1", "1.mp3"), episode("old-2", "2.mp3")])
        let fetched = Feed(title: nil, episodes: [episode("new-2", "2.mp3"), episode("new-1", "1.mp3"), episode("new-3", "3.mp3")])
        let update = FeedState.merge(known: known, fetched: .success(fetched))
        #expect(update.state.episodes.map(\.id) == ["new-1", "new-2", "new-3"], "the known ones take their new identities, in place")
        #expect(update.newEpisodes.map(\.id) == ["new-3"])
    }

    @Test func anEpisodeThatGainsAGUIDIsNoDuplicate() {
        let url = "https://cdn.example.com/1.mp3"
        let known = FeedState(url: feedURL, episodes: [episode(url, "1.mp3")])
        let update = FeedState.merge(known: known, fetched: .success(Feed(title: nil, episodes: [episode("guid-1", "1.mp3")])))
        #expect(update.state.episodes.map(\.id) == ["guid-1"])
        #expect(update.result == .noData)
    }

    @Test func twoItemsClaimingOneKnownEpisodeDoNotDoubleIt() {
        let known = FeedState(url: feedURL, episodes: [episode("a", "1.mp3")])
        let fetched = Feed(title: nil, episodes: [episode("a", "1.mp3"), episode("b", "1.mp3")])
        let update = FeedState.merge(known: known, fetched: .success(fetched))
        #expect(update.state.episodes.count == 1)
        #expect(update.result == .noData)
    }

    @Test func episodesTheFeedNoLongerListsStayKnown() {
        let known = FeedState(url: feedURL, title: "Old title", episodes: [episode("a", "1.mp3"), episode("b", "2.mp3")])
        let update = FeedState.merge(known: known, fetched: .success(Feed(title: nil, episodes: [episode("c", "3.mp3")])))
        #expect(update.state.episodes.map(\.id) == ["a", "b", "c"])
        #expect(update.state.title == "Old title", "a feed without a title keeps the one known")
    }
}

@testable import FeedFetch
import Feeds
import Foundation
import Logging
import QueuePlayer
import TestSupport
import Testing

/// The fetcher's timer, fetches, merging and saving, against a virtual clock, a scripted
/// network and a recording life cycle: the daemon's rules without a server or real time.
@Suite struct BackgroundFetcherTests {
    struct Fixture {
        // Steps as long as the test asks: nothing here needs time cut finer.
        let clock = VirtualClock(maximumStepNanoseconds: 1 << 50)
        let host = RecordingHost()
        let fetcher: ScriptedFetcher
        let background: BackgroundFetcher
        let directory: URL

        init(interval: Double?, pushSpacing: Double = 5, directory: URL? = nil,
             _ answer: @escaping @Sendable (FeedRequest, Int) -> FeedResponse) throws {
            let directory = try directory ?? Self.scratch()
            self.directory = directory
            fetcher = ScriptedFetcher(answer)
            background = BackgroundFetcher(
                configuration: .init(rules: .init(interval: interval, pushSpacing: pushSpacing), timeout: 30),
                clock: clock, fetcher: fetcher, store: FeedRecordStore(file: directory.appendingPathComponent("feeds.json")),
                host: host, logger: Logger(label: "test"))
        }

        static func scratch() throws -> URL {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedfetch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        func records() async -> [FeedRecord] { await background.subscribedRecords() }

        /// Waits until `count` fetches have ended (their result recorded and their task ended).
        func waitForFetches(_ count: Int) -> Bool {
            waitUntil(timeout: 10) { host.ended >= count && fetcher.requests.count >= count }
        }
    }

    static let etag = "\"v1\""

    @Test func newDataThenAConditionalGetAnsweredNotModifiedIsNoDataAtTheInterval() async throws {
        let fixture = try Fixture(interval: 2) { request, index in
            index == 0 ? .body(FeedBodies.rss(episodes: 2), finalURL: request.url, permanentURL: nil,
                               validators: .init(entityTag: Self.etag, lastModified: "Wed, 25 Nov 2026 08:00:00 GMT"))
                : .notModified(permanentURL: nil, validators: .init())
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        #expect(fixture.waitForFetches(1), "a new subscription is fetched at once")
        var record = try #require(await fixture.records().first)
        #expect(record.lastResult == "newData (2 new episodes)")
        #expect(record.state.episodes.map(\.id) == ["ep-1", "ep-2"])
        #expect(record.state.episodes[0].enclosure.url.absoluteString == "http://feeds.test/media/1.mp3")
        #expect(fixture.fetcher.requests[0].validators.isEmpty)

        fixture.clock.advance(bySeconds: 1.9)
        #expect(fixture.background.runningFeeds.isEmpty && fixture.fetcher.requests.count == 1, "not before the interval")
        fixture.clock.advance(bySeconds: 0.2)
        #expect(fixture.waitForFetches(2))
        #expect(fixture.fetcher.requests[1].validators == .init(entityTag: Self.etag, lastModified: "Wed, 25 Nov 2026 08:00:00 GMT"))
        record = try #require(await fixture.records().first)
        #expect(record.lastResult == "noData")
        #expect(record.state.episodes.count == 2, "a 304 keeps every episode")
        #expect(fixture.host.begun == ["fetch \(FeedBodies.feedURL.absoluteString)", "fetch \(FeedBodies.feedURL.absoluteString)"],
                "each fetch runs in a background task of its own")
        await fixture.background.stop()
    }

    @Test func anHTMLPageOrANetworkFailureFailsKeepsTheEpisodesAndTheValidatorsAndBacksOff() async throws {
        let fixture = try Fixture(interval: 10) { request, index in
            switch index {
            case 0: .body(FeedBodies.rss(episodes: 3), finalURL: request.url, permanentURL: nil, validators: .init(entityTag: Self.etag))
            case 1: .body(FeedBodies.html, finalURL: request.url, permanentURL: nil, validators: .init(entityTag: "\"portal\""))
            default: .failed("connection refused", retryAfter: nil)
            }
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        #expect(fixture.waitForFetches(1))
        fixture.clock.advance(bySeconds: 10.1)
        #expect(fixture.waitForFetches(2))
        var record = try #require(await fixture.records().first)
        #expect(record.lastResult == "failed (not a feed: the server sent an HTML page)")
        #expect(record.state.episodes.count == 3)
        #expect(record.validators.entityTag == Self.etag, "an unreadable body's validators are not kept")
        // After one failure the back-off is the interval (10 s); after two, 20 s.
        fixture.clock.advance(bySeconds: 10.1)
        #expect(fixture.waitForFetches(3))
        record = try #require(await fixture.records().first)
        #expect(record.lastResult == "failed (connection refused)")
        fixture.clock.advance(bySeconds: 19.8)
        #expect(fixture.background.runningFeeds.isEmpty && fixture.fetcher.requests.count == 3, "backing off: 20 s after the second failure")
        fixture.clock.advance(bySeconds: 0.4)
        #expect(fixture.waitForFetches(4))
        await fixture.background.stop()
    }

    @Test func retryAfterDelaysTheNextRequest() async throws {
        let fixture = try Fixture(interval: 2) { request, index in
            index == 0 ? .failed("HTTP 429 Too Many Requests, retry after 5 s", retryAfter: 5)
                : .body(FeedBodies.rss(episodes: 1), finalURL: request.url, permanentURL: nil, validators: .init())
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        #expect(fixture.waitForFetches(1))
        fixture.clock.advance(bySeconds: 4.8)
        #expect(fixture.fetcher.requests.count == 1 && fixture.background.runningFeeds.isEmpty, "the 2 s interval gives way to the server's 5 s")
        fixture.clock.advance(bySeconds: 0.4)
        #expect(fixture.waitForFetches(2))
        await fixture.background.stop()
    }

    @Test func pushesWhileAFetchRunsCoalesceIntoOneMoreFetch() async throws {
        let fixture = try Fixture(interval: nil, pushSpacing: 0) { request, _ in
            .body(FeedBodies.rss(episodes: 1), finalURL: request.url, permanentURL: nil, validators: .init())
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        fixture.fetcher.hold()
        fixture.background.push(feed: nil)
        #expect(waitUntil(timeout: 10) { fixture.fetcher.requests.count == 1 }, "interval never: only the push fetches")
        for _ in 0..<9 { fixture.background.push(feed: FeedBodies.feedURL) }
        fixture.fetcher.release()
        #expect(fixture.waitForFetches(2))
        fixture.background.queue.sync {}
        #expect(fixture.background.runningFeeds.isEmpty)
        #expect(fixture.fetcher.requests.count == 2, "ten pushes, two fetches")
        await fixture.background.stop()
    }

    /// The daemon reads its feeds file on the fetcher's queue as it starts; a push sent as soon
    /// as the control socket accepts is queued after that read, and must find the feeds it
    /// names subscribed (it found none when the list read was applied in a turn of its own).
    @Test func aPushQueuedAfterTheFeedsFileIsReadFindsItsFeedsSubscribed() async throws {
        let fixture = try Fixture(interval: nil, pushSpacing: 0) { request, _ in
            .body(FeedBodies.rss(episodes: 1), finalURL: request.url, permanentURL: nil, validators: .init())
        }
        fixture.background.setSubscriptions(reading: { [FeedBodies.feedURL] })
        fixture.background.push(feed: nil)
        #expect(fixture.waitForFetches(1), "interval never: the push fetches")
        #expect(fixture.fetcher.requests.map(\.url) == [FeedBodies.feedURL])
        await fixture.background.stop()
    }

    @Test func aPushForAnotherFeedOrAMovedOneIsMatchedByEitherURL() async throws {
        let moved = URL(string: "https://new.feeds.test/show.xml")!
        let fixture = try Fixture(interval: nil, pushSpacing: 0) { request, _ in
            .body(FeedBodies.rss(episodes: 1), finalURL: moved, permanentURL: moved, validators: .init())
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        fixture.background.push(feed: URL(string: "http://unknown.test/feed")!)
        fixture.background.queue.sync {}
        #expect(fixture.background.runningFeeds.isEmpty && fixture.fetcher.requests.isEmpty)
        fixture.background.push(feed: FeedBodies.feedURL)
        #expect(fixture.waitForFetches(1))
        fixture.background.push(feed: moved)
        #expect(fixture.waitForFetches(2))
        #expect(fixture.fetcher.requests.map(\.url) == [FeedBodies.feedURL, moved], "after a 301 the feed is fetched where it moved")
        await fixture.background.stop()
    }

    @Test func aTemporaryRedirectLeavesTheURL() async throws {
        let fixture = try Fixture(interval: 1) { request, _ in
            .body(FeedBodies.rss(episodes: 1), finalURL: URL(string: "https://elsewhere.test/x.xml")!, permanentURL: nil, validators: .init())
        }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        #expect(fixture.waitForFetches(1))
        fixture.clock.advance(bySeconds: 1.1)
        #expect(fixture.waitForFetches(2))
        #expect(fixture.fetcher.requests.map(\.url) == [FeedBodies.feedURL, FeedBodies.feedURL])
        #expect(try #require(await fixture.records().first).state.episodes[0].enclosure.url.absoluteString
                == "https://elsewhere.test/media/1.mp3", "relative URLs resolve against where the body came from")
        await fixture.background.stop()
    }

    @Test func anExpiredBackgroundTaskCancelsTheFetchWhichFailsAndEndsItsTask() async throws {
        let fixture = try Fixture(interval: 60) { request, _ in
            .body(FeedBodies.rss(episodes: 1), finalURL: request.url, permanentURL: nil, validators: .init())
        }
        fixture.fetcher.hold()
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        #expect(waitUntil(timeout: 10) { fixture.fetcher.requests.count == 1 && fixture.host.begun.count == 1 })
        fixture.host.expireAll()
        #expect(waitUntil(timeout: 10) { fixture.host.ended == 1 })
        let record = try #require(await fixture.records().first)
        #expect(record.lastResult == "failed (the background time ran out)")
        #expect(record.state.episodes.isEmpty)
        await fixture.background.stop()
    }

    @Test func theRecordsSurviveARestartAndTheIntervalHoldsAcrossIt() async throws {
        let directory = try Fixture.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Fixture(interval: 3600, directory: directory) { request, _ in
            .body(FeedBodies.rss(episodes: 2), finalURL: request.url, permanentURL: nil, validators: .init(entityTag: Self.etag))
        }
        first.background.setSubscriptions([FeedBodies.feedURL])
        #expect(first.waitForFetches(1))
        await first.background.stop()

        let second = try Fixture(interval: 3600, directory: directory) { request, _ in .notModified(permanentURL: nil, validators: .init()) }
        second.background.setSubscriptions([FeedBodies.feedURL])
        second.background.queue.sync {}
        #expect(second.background.runningFeeds.isEmpty, "fetched a moment ago: not again at start")
        #expect(try #require(await second.records().first).state.episodes.count == 2)
        second.clock.advance(bySeconds: 3600)
        #expect(second.waitForFetches(1))
        #expect(second.fetcher.requests[0].validators.entityTag == Self.etag)
        await second.background.stop()
    }

    @Test func anUnreadableRecordsFileIsMovedAsideNotOverwritten() async throws {
        let directory = try Fixture.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("{ not json".utf8).write(to: directory.appendingPathComponent("feeds.json"))
        let fixture = try Fixture(interval: nil, directory: directory) { request, _ in .notModified(permanentURL: nil, validators: .init()) }
        fixture.background.setSubscriptions([FeedBodies.feedURL])
        fixture.background.queue.sync {}
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.contains { $0.hasPrefix("feeds.json.unusable-") }, "\(names)")
        await fixture.background.stop()
    }
}

import FeedFetch
import Testing

/// The scheduling rules of background fetch against a clock the test moves by hand.
@Suite struct FetchScheduleTests {
    static let feed = "http://example.test/feed.xml"
    static let other = "http://example.test/other.xml"

    /// Runs what is due at `now` and returns the feeds started.
    static func started(_ schedule: inout FetchSchedule, at now: Double) -> [String] {
        schedule.due(at: now).map(\.feed)
    }

    @Test func aNewFeedIsFetchedAtOnceThenNeverSoonerThanTheIntervalAfterTheLastFetchEnded() {
        var schedule = FetchSchedule(rules: .init(interval: 60))
        schedule.add(Self.feed, at: 100)
        #expect(schedule.nextDeadline() == 100)
        #expect(schedule.due(at: 100) == [.init(feed: Self.feed, reason: .scheduled)])
        #expect(schedule.nextDeadline() == nil, "nothing else is due while it runs")
        #expect(Self.started(&schedule, at: 100.5).isEmpty, "never twice at once")
        schedule.finished(Self.feed, .succeeded, at: 101)
        #expect(schedule.nextDeadline() == 161)
        #expect(Self.started(&schedule, at: 160.999).isEmpty)
        #expect(Self.started(&schedule, at: 161) == [Self.feed])
    }

    @Test func aFeedFetchedRecentlyBeforeARestartWaitsForTheRestOfItsInterval() {
        var schedule = FetchSchedule(rules: .init(interval: 3600))
        schedule.add(Self.feed, at: 10, sinceLastFetch: 600)
        #expect(schedule.nextDeadline() == 3010)
        schedule.add(Self.other, at: 10, sinceLastFetch: 7200)
        #expect(schedule.due(at: 10).map(\.feed) == [Self.other])
        // A clock set back (a last fetch "in the future") counts as just fetched.
        schedule.add("http://example.test/third", at: 10, sinceLastFetch: -50)
        #expect(schedule.nextDeadline() == 3010)
    }

    @Test func failuresBackOffExponentiallyCappedAndASuccessEndsTheBackOff() {
        var schedule = FetchSchedule(rules: .init(interval: 60, maximumBackoff: 300))
        schedule.add(Self.feed, at: 0)
        var now = 0.0
        var delays: [Double] = []
        for _ in 0..<6 {
            #expect(Self.started(&schedule, at: now) == [Self.feed])
            schedule.finished(Self.feed, .failed(retryAfter: nil), at: now)
            let next = try! #require(schedule.nextDeadline())
            delays.append(next - now)
            now = next
        }
        #expect(delays == [60, 120, 240, 300, 300, 300], "doubling from the interval, capped at 300 s")
        #expect(Self.started(&schedule, at: now) == [Self.feed])
        schedule.finished(Self.feed, .succeeded, at: now)
        #expect(schedule.nextDeadline() == now + 60)
    }

    @Test func theBackOffCapNeverShortensALongInterval() {
        var schedule = FetchSchedule(rules: .init(interval: 86_400, maximumBackoff: 3600))
        schedule.add(Self.feed, at: 0)
        _ = schedule.due(at: 0)
        schedule.finished(Self.feed, .failed(retryAfter: nil), at: 0)
        #expect(schedule.nextDeadline() == 86_400)
        _ = schedule.due(at: 86_400)
        schedule.finished(Self.feed, .failed(retryAfter: nil), at: 86_400)
        #expect(schedule.nextDeadline() == 172_800, "capped at the interval, never under it")
    }

    @Test func retryAfterHoldsBackScheduledFetchesAndPushesAlike() {
        var schedule = FetchSchedule(rules: .init(interval: 2, pushSpacing: 1))
        schedule.add(Self.feed, at: 0)
        _ = schedule.due(at: 0)
        schedule.finished(Self.feed, .failed(retryAfter: 5), at: 0.1)
        #expect(schedule.nextDeadline() == 5.1, "the server's 5 s, not the 2 s interval")
        schedule.push(Self.feed, at: 2)
        #expect(Self.started(&schedule, at: 5).isEmpty, "a push waits for Retry-After too")
        #expect(schedule.due(at: 5.1) == [.init(feed: Self.feed, reason: .push)])
    }

    @Test func aRetryAfterShorterThanTheBackOffLeavesTheBackOffAndAHugeOneIsCapped() {
        var schedule = FetchSchedule(rules: .init(interval: 10, maximumRetryAfter: 3600))
        schedule.add(Self.feed, at: 0)
        _ = schedule.due(at: 0)
        schedule.finished(Self.feed, .failed(retryAfter: 1), at: 0)
        #expect(schedule.nextDeadline() == 10)
        _ = schedule.due(at: 10)
        schedule.finished(Self.feed, .failed(retryAfter: 1e9), at: 10)
        #expect(schedule.nextDeadline() == 3610)
    }

    @Test func pushesDuringAFetchCoalesceIntoOneMoreFetch() {
        var schedule = FetchSchedule(rules: .init(interval: nil, pushSpacing: 1))
        schedule.add(Self.feed, at: 0)
        #expect(schedule.nextDeadline() == nil, "interval never: nothing is scheduled")
        schedule.push(nil, at: 10)
        #expect(schedule.due(at: 10) == [.init(feed: Self.feed, reason: .push)])
        for index in 1...9 { schedule.push(Self.feed, at: 10 + Double(index) * 0.1) }
        #expect(schedule.due(at: 11).isEmpty, "still fetching")
        schedule.finished(Self.feed, .succeeded, at: 11.5)
        #expect(schedule.due(at: 11.5) == [.init(feed: Self.feed, reason: .push)], "the nine pushes: one more fetch")
        schedule.finished(Self.feed, .succeeded, at: 11.6)
        #expect(schedule.nextDeadline() == nil, "and no third")
    }

    @Test func aBurstOfPushesAgainstAFastServerCostsAtMostTwoFetches() {
        // Each fetch ends in a millisecond: the pushes are spaced, not overlapping.
        var schedule = FetchSchedule(rules: .init(interval: nil, pushSpacing: 5))
        schedule.add(Self.feed, at: 0)
        var fetches = 0
        var now = 100.0
        for _ in 0..<10 {
            schedule.push(nil, at: now)
            for start in schedule.due(at: now) {
                fetches += 1
                schedule.finished(start.feed, .succeeded, at: now + 0.001)
            }
            now += 0.1
        }
        #expect(fetches == 1)
        #expect(schedule.nextDeadline() == 105, "the rest of the burst: one fetch when the spacing has passed")
        #expect(schedule.due(at: 105).count == 1)
        schedule.finished(Self.feed, .succeeded, at: 105.001)
        #expect(schedule.nextDeadline() == nil)
    }

    @Test func aPushLongAfterTheLastFetchStartsAtOnceAndRestartsTheInterval() {
        var schedule = FetchSchedule(rules: .init(interval: 3600))
        schedule.add(Self.feed, at: 0)
        _ = schedule.due(at: 0)
        schedule.finished(Self.feed, .succeeded, at: 1)
        #expect(schedule.push(Self.feed, at: 100) == [Self.feed])
        #expect(schedule.due(at: 100) == [.init(feed: Self.feed, reason: .push)])
        schedule.finished(Self.feed, .succeeded, at: 101)
        #expect(schedule.nextDeadline() == 3701)
    }

    @Test func aPushForAFeedNotSubscribedChangesNothing() {
        var schedule = FetchSchedule(rules: .init(interval: nil))
        schedule.add(Self.feed, at: 0)
        #expect(schedule.push("http://example.test/unknown", at: 1).isEmpty)
        #expect(schedule.nextDeadline() == nil)
    }

    @Test func atMostTheConcurrencyLimitRunsAndTheRestWaitTheirTurn() {
        var schedule = FetchSchedule(rules: .init(interval: 60, maximumConcurrentFetches: 2))
        let feeds = (0..<5).map { "http://example.test/\($0)" }
        for feed in feeds { schedule.add(feed, at: 0) }
        #expect(Self.started(&schedule, at: 0) == Array(feeds[0..<2]))
        #expect(schedule.nextDeadline() == nil, "every slot taken")
        schedule.finished(feeds[0], .succeeded, at: 1)
        #expect(schedule.nextDeadline() == 0, "the waiting ones are overdue")
        #expect(Self.started(&schedule, at: 1) == [feeds[2]])
    }

    @Test func aRemovedFeedIsNeverFetchedAgainAndItsRunningFetchEndsUnheeded() {
        var schedule = FetchSchedule(rules: .init(interval: 60))
        schedule.add(Self.feed, at: 0)
        _ = schedule.due(at: 0)
        schedule.remove(Self.feed)
        schedule.finished(Self.feed, .succeeded, at: 1)
        #expect(schedule.feeds.isEmpty && schedule.nextDeadline() == nil)
    }
}

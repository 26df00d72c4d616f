/// When each subscribed feed is fetched next: the rules of background fetch as a value
/// with no clock, no timer and no network of its own.
///
/// The rules are the ones podcast users' complaints are about (refreshes that never fire or
/// fire too often, servers hammered after a 304 or a 429), so they live apart from the code
/// that runs timers and HTTP, and every caller passes `now` (monotonic seconds): tests state
/// them against a clock they move by hand.
///
/// - A scheduled fetch of a feed starts no sooner than ``Rules/interval`` after the previous
///   fetch of it ended (iOS's minimum background fetch interval); `nil` (`never`) schedules
///   none, and only pushes fetch.
/// - A failure pushes the next scheduled fetch back exponentially: the interval times 2^(n-1)
///   after n failures in a row, capped at the larger of the interval and
///   ``Rules/maximumBackoff``. A success ends the back-off.
/// - A `Retry-After` (429, 503) is the server's demand and a floor for every fetch of the
///   feed, pushes included, up to ``Rules/maximumRetryAfter``.
/// - A push asks for one fetch of a feed now. Pushes that arrive while it is fetched, or less
///   than ``Rules/pushSpacing`` after its last fetch started, coalesce into one more fetch:
///   a burst of pushes costs the server at most two requests.
/// - At most ``Rules/maximumConcurrentFetches`` fetches run at once; the others wait their turn.
public struct FetchSchedule: Sendable {
    /// The numbers the rules use.
    public struct Rules: Sendable, Equatable {
        /// Minimum seconds from the end of one scheduled fetch of a feed to the start of the
        /// next; nil turns scheduled fetches off (`--fetch-interval never`).
        public var interval: Double?
        /// The back-off never grows past this (or the interval, if that is longer).
        public var maximumBackoff: Double
        /// A longer `Retry-After` is taken as this long: a server's typo must not silence a
        /// feed for years.
        public var maximumRetryAfter: Double
        /// The least time between the starts of two fetches of a feed that pushes asked for.
        public var pushSpacing: Double
        /// How many fetches may run at once.
        public var maximumConcurrentFetches: Int

        public init(interval: Double?, maximumBackoff: Double = 6 * 3600, maximumRetryAfter: Double = 24 * 3600,
                    pushSpacing: Double = 5, maximumConcurrentFetches: Int = 4) {
            self.interval = interval
            self.maximumBackoff = maximumBackoff
            self.maximumRetryAfter = maximumRetryAfter
            self.pushSpacing = pushSpacing
            self.maximumConcurrentFetches = max(1, maximumConcurrentFetches)
        }
    }

    /// Why a fetch starts, for its log line.
    public enum Reason: String, Sendable, Equatable {
        /// The interval (or the back-off) came round, or the feed was just subscribed.
        case scheduled
        /// A remote notification asked for it.
        case push
    }

    /// One fetch to start now.
    public struct Start: Sendable, Equatable {
        public var feed: FeedID
        public var reason: Reason

        public init(feed: FeedID, reason: Reason) {
            self.feed = feed
            self.reason = reason
        }
    }

    /// How a fetch ended, as far as scheduling cares.
    public enum Outcome: Sendable, Equatable {
        /// The feed was read (a 200 that parsed, or a 304).
        case succeeded
        /// Not read (no answer, an HTTP error, a body that is not a feed); `retryAfter`
        /// seconds when the server said when to come back.
        case failed(retryAfter: Double?)
    }

    /// A subscribed feed, as the schedule knows it (its subscription URL's text).
    public typealias FeedID = String

    private struct Entry {
        /// When the next scheduled fetch is due; nil when none is (interval `never`).
        var nextScheduled: Double?
        /// Nothing starts before this (the server's `Retry-After`).
        var notBefore = -Double.infinity
        var failuresInARow = 0
        var inFlight = false
        /// A push asked for a fetch that has not started yet.
        var pushPending = false
        var lastStart: Double?
    }

    public let rules: Rules
    private var entries: [FeedID: Entry] = [:]
    /// The feeds in the order they were added: who goes first when several are due.
    private var order: [FeedID] = []

    public init(rules: Rules) {
        self.rules = rules
    }

    /// The subscribed feeds.
    public var feeds: [FeedID] { order }

    /// True while a fetch of `feed` runs.
    public func isFetching(_ feed: FeedID) -> Bool { entries[feed]?.inFlight ?? false }

    /// Subscribes `feed`. Its first scheduled fetch is due once the interval has passed since
    /// its last fetch (`sinceLastFetch` seconds ago, from what was saved), or at once if it
    /// was never fetched. Adding a feed twice changes nothing.
    public mutating func add(_ feed: FeedID, at now: Double, sinceLastFetch: Double? = nil) {
        guard entries[feed] == nil else { return }
        var entry = Entry()
        if let interval = rules.interval {
            let elapsed = sinceLastFetch.map { max(0, $0) } ?? .infinity
            entry.nextScheduled = elapsed >= interval ? now : now + (interval - elapsed)
        }
        entries[feed] = entry
        order.append(feed)
    }

    /// Unsubscribes `feed`. A fetch of it that still runs ends unheeded.
    public mutating func remove(_ feed: FeedID) {
        guard entries.removeValue(forKey: feed) != nil else { return }
        order.removeAll { $0 == feed }
    }

    /// A push for `feed`, or for every feed when nil. Returns the feeds it applies to (none if
    /// `feed` is not subscribed). Call ``due(at:)`` after it: the fetch may start at once.
    @discardableResult
    public mutating func push(_ feed: FeedID?, at now: Double) -> [FeedID] {
        let targets = feed.map { entries[$0] == nil ? [] : [$0] } ?? order
        for target in targets { entries[target]?.pushPending = true }
        return targets
    }

    /// The fetches to start now, marked as running. At most the free concurrency slots.
    public mutating func due(at now: Double) -> [Start] {
        var free = rules.maximumConcurrentFetches - entries.values.filter(\.inFlight).count
        var starts: [Start] = []
        for feed in order where free > 0 {
            guard let entry = entries[feed], !entry.inFlight, let (time, reason) = dueTime(of: entry), time <= now else { continue }
            entries[feed]?.inFlight = true
            entries[feed]?.pushPending = false
            entries[feed]?.lastStart = now
            starts.append(Start(feed: feed, reason: reason))
            free -= 1
        }
        return starts
    }

    /// When the next fetch is due (possibly already), or nil if none is: the time to set the
    /// timer to. With every slot taken, nil too: the next ``finished(_:_:at:)`` frees one.
    public func nextDeadline() -> Double? {
        guard entries.values.filter(\.inFlight).count < rules.maximumConcurrentFetches else { return nil }
        return order.compactMap { feed in entries[feed].flatMap { $0.inFlight ? nil : dueTime(of: $0)?.time } }.min()
    }

    /// A fetch of `feed` ended with `outcome`: the next one is scheduled by the rules.
    public mutating func finished(_ feed: FeedID, _ outcome: Outcome, at now: Double) {
        guard var entry = entries[feed], entry.inFlight else { return }
        entry.inFlight = false
        switch outcome {
        case .succeeded:
            entry.failuresInARow = 0
            entry.nextScheduled = rules.interval.map { now + $0 }
        case .failed(let retryAfter):
            entry.failuresInARow += 1
            if let interval = rules.interval {
                entry.nextScheduled = now + backoff(interval: interval, failures: entry.failuresInARow)
            }
            if let retryAfter {
                entry.notBefore = now + min(max(0, retryAfter), rules.maximumRetryAfter)
            }
        }
        entries[feed] = entry
    }

    /// The delay after `failures` failures in a row: the interval doubled per failure after
    /// the first, capped.
    private func backoff(interval: Double, failures: Int) -> Double {
        let cap = max(interval, rules.maximumBackoff)
        let doublings = min(failures - 1, 62)
        return min(interval * Double(UInt64(1) << UInt64(max(0, doublings))), cap)
    }

    /// When `entry` is next due and why: the earlier of its scheduled time and a pending push
    /// (held back by the push spacing), never before the server's `Retry-After`.
    private func dueTime(of entry: Entry) -> (time: Double, reason: Reason)? {
        var candidates: [(Double, Reason)] = []
        if entry.pushPending {
            candidates.append(((entry.lastStart ?? -.infinity) + rules.pushSpacing, .push))
        }
        if let scheduled = entry.nextScheduled { candidates.append((scheduled, .scheduled)) }
        guard let earliest = candidates.min(by: { $0.0 < $1.0 }) else { return nil }
        return (max(earliest.0, entry.notBefore), earliest.1)
    }
}

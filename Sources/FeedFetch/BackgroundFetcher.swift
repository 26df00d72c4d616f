import Dispatch
import Feeds
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import QueuePlayer

/// Background fetch of the subscribed feeds: a timer set to the ``FetchSchedule``'s next
/// deadline, each due fetch run inside a background task of the host (which wakes a
/// suspended daemon for it), its response parsed and merged, the record saved, the result
/// logged, and the timer set again.
///
/// The timer is a ``PlaybackClock`` deadline (the daemon's one clock thread, or a virtual
/// clock in tests), never a poll: a suspended daemon sleeps until the next fetch is due.
/// The network is behind ``FeedFetching``; the life cycle behind ``BackgroundFetchHost``.
///
/// Its state (schedule, records, running fetches, the timer) is owned by ``queue``: every
/// public method hops there. The queue may block on parsing a feed (up to the body cap) and
/// on writing `feeds.json`; the HTTP exchange runs as a Swift task on the fetcher's event
/// loop, and only its result comes back to the queue.
public final class BackgroundFetcher: @unchecked Sendable {
    /// How fetches are made and scheduled.
    public struct Configuration: Sendable {
        public var rules: FetchSchedule.Rules
        /// Seconds a fetch may take (`--fetch-timeout`, 30 by default: iOS's limit for a
        /// background fetch).
        public var timeout: Double
        public var maximumBodySize: Int

        public init(rules: FetchSchedule.Rules, timeout: Double = 30, maximumBodySize: Int = FeedParser.defaultMaximumBodySize) {
            self.rules = rules
            self.timeout = timeout
            self.maximumBodySize = maximumBodySize
        }
    }

    /// The queue that owns the fetcher's state.
    public let queue = DispatchQueue(label: "queueplayerd.feeds")
    /// The clock runs a deadline's work holding the queue it is given: an idle one of its own,
    /// so parsing on ``queue`` never holds the clock thread (and the player's ticks) up.
    private let timerQueue = DispatchQueue(label: "queueplayerd.feeds.timer")
    private let configuration: Configuration
    private let clock: any PlaybackClock
    private let fetcher: any FeedFetching
    private let store: FeedRecordStore?
    private let host: any BackgroundFetchHost
    private let logger: Logger
    private let newEpisodes: @Sendable (_ record: FeedRecord, _ episodes: [Episode]) -> Bool

    private var schedule: FetchSchedule
    /// Every record known, by subscription URL (unsubscribed ones are kept: subscribing again
    /// keeps the episodes).
    private var records: [FetchSchedule.FeedID: FeedRecord] = [:]
    private var recordsLoaded = false
    private var running: [FetchSchedule.FeedID: RunningFetch] = [:]
    private var timer: (any ScheduledWork)?
    private var timerGeneration = 0
    private var stopped = false

    /// `newEpisodes` gets each fetch's new episodes (on ``queue``, before the record is saved,
    /// so a journal it writes is never behind the records): every new one, except at a feed's
    /// first fetch, where only the newest counts (subscribing to a show does not ask for its
    /// whole back catalogue). It returns false when it could not take them all (the daemon is
    /// stopping): the record is then not updated, so they are new again at the next start.
    public init(configuration: Configuration, clock: any PlaybackClock = RealTimeClock.shared, fetcher: any FeedFetching,
                store: FeedRecordStore?, host: any BackgroundFetchHost, logger: Logger,
                newEpisodes: @escaping @Sendable (_ record: FeedRecord, _ episodes: [Episode]) -> Bool = { _, _ in true }) {
        self.newEpisodes = newEpisodes
        self.configuration = configuration
        self.clock = clock
        self.fetcher = fetcher
        self.store = store
        self.host = host
        self.logger = logger
        schedule = FetchSchedule(rules: configuration.rules)
    }

    /// Subscribes to exactly `urls` (at start, and when the feeds file is read again):
    /// new ones are fetched when due (at once if never fetched), gone ones are dropped.
    public func setSubscriptions(_ urls: [URL]) {
        setSubscriptions(reading: { urls })
    }

    /// ``setSubscriptions(_:)`` to what `read` gives (the feeds file read), `read` called on
    /// ``queue`` and its list applied in the same turn: a push queued after this call finds the
    /// feeds subscribed. (Read in one turn and applied in another, a push sent as the daemon's
    /// socket began to accept could come between them and find none.)
    public func setSubscriptions(reading read: @escaping @Sendable () -> [URL]) {
        queue.async { [self] in subscribe(read()) }
    }

    private func subscribe(_ urls: [URL]) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        loadRecordsIfNeeded()
        let wanted = Set(urls.map(\.absoluteString))
        for feed in schedule.feeds where !wanted.contains(feed) {
            schedule.remove(feed)
            logger.info("feed \(RedactedURL.text(feed)): unsubscribed")
        }
        let now = seconds(clock.now())
        for url in urls where !schedule.feeds.contains(url.absoluteString) {
            let since = records[url.absoluteString]?.lastFetched.map { Date().timeIntervalSince($0) }
            schedule.add(url.absoluteString, at: now, sinceLastFetch: since)
        }
        runDueFetches()
    }

    /// A remote notification asked for a fetch of `feed` (a subscription URL, or where the
    /// feed moved to), or of every feed when nil.
    public func push(feed: URL?) {
        queue.async { [self] in
            guard !stopped else { return }
            var target: FetchSchedule.FeedID?
            if let feed {
                target = schedule.feeds.first { $0 == feed.absoluteString || records[$0]?.state.url == feed }
                guard target != nil else {
                    logger.warning("remote notification for \(RedactedURL.text(feed)), which is not subscribed: ignored")
                    return
                }
            }
            let targets = schedule.push(target, at: seconds(clock.now()))
            guard !targets.isEmpty else {
                logger.info("remote notification: no feeds are subscribed")
                return
            }
            let busy = targets.filter { schedule.isFetching($0) }.count
            logger.info("remote notification: fetch \(target.map(RedactedURL.text) ?? "every feed")\(busy == 0 ? "" : " (\(busy) fetching now: one more fetch after)")")
            runDueFetches()
        }
    }

    /// The records as they are now (for tests and `status`-like reports).
    public func subscribedRecords() async -> [FeedRecord] {
        await queue.perform { [self] in schedule.feeds.compactMap { records[$0] } }
    }

    /// Stops: no more fetches start, the running ones are cancelled and waited for.
    public func stop() async {
        let tasks = await queue.perform { [self] in
            stopped = true
            timer?.cancel()
            timer = nil
            return running.values.compactMap { $0.cancel(because: "the daemon is stopping") }
        }
        for task in tasks { await task.value }
    }

    /// The feeds being fetched now (for tests: the launch is synchronous on the queue).
    var runningFeeds: [FetchSchedule.FeedID] { queue.sync { Array(running.keys) } }

    // MARK: - On the queue

    private func loadRecordsIfNeeded() {
        guard !recordsLoaded else { return }
        recordsLoaded = true
        guard let store else { return }
        let (loaded, problem) = store.load()
        if let problem { logger.warning("feeds: \(problem)") }
        records = Dictionary(loaded.map { ($0.key.absoluteString, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    private func runDueFetches() {
        guard !stopped else { return }
        for start in schedule.due(at: seconds(clock.now())) {
            launch(start)
        }
        setTimer()
    }

    private func launch(_ start: FetchSchedule.Start) {
        guard let record = records[start.feed] ?? URL(string: start.feed).map(FeedRecord.init(subscription:)) else { return }
        let request = FeedRequest(url: record.state.url, validators: record.validators,
                                  timeout: configuration.timeout, maximumBodySize: configuration.maximumBodySize)
        let fetch = RunningFetch()
        running[start.feed] = fetch
        logger.info("feed \(RedactedURL.text(start.feed)): fetching (\(start.reason.rawValue))")
        let (host, fetcher, queue, allowance) = (host, fetcher, queue, configuration.timeout + 5)
        let task = Task {
            let backgroundTask = await host.beginBackgroundFetch(named: "fetch \(start.feed)", allowance: allowance) {
                _ = fetch.cancel(because: "the background time ran out")
            }
            var response = FeedResponse.failed("cancelled", retryAfter: nil)
            if !fetch.isCancelled { response = await fetcher.fetch(request) }
            if let reason = fetch.cancellationReason { response = .failed(reason, retryAfter: nil) }
            queue.async { [self, response] in
                finish(start.feed, fetch: fetch, request: request, response: response)
                backgroundTask.end()
            }
        }
        fetch.setTask(task)
    }

    private func finish(_ feed: FetchSchedule.FeedID, fetch: RunningFetch, request: FeedRequest, response: FeedResponse) {
        // Not current when the feed was unsubscribed and subscribed again while it ran: its
        // result is kept, but the schedule is the new fetch's.
        let isCurrent = running[feed] === fetch
        if isCurrent { running[feed] = nil }
        guard var record = records[feed] ?? URL(string: feed).map(FeedRecord.init(subscription:)) else { return }
        let result: FetchResult
        let outcome: FetchSchedule.Outcome
        switch response {
        case .body(let body, let finalURL, let permanentURL, let validators):
            let parsed: Result<Feed, FeedError>
            do throws(FeedError) {
                parsed = .success(try FeedParser(maximumBodySize: request.maximumBodySize).parse(body, from: finalURL))
            } catch {
                parsed = .failure(error)
            }
            let update = FeedState.merge(known: record.state, fetched: parsed)
            let isFirst = record.state.episodes.isEmpty
            let known = record
            record.state = update.state
            result = update.result
            if case .success = parsed {
                record.validators = validators
                move(&record, to: permanentURL)
                outcome = .succeeded
                let wanted = isFirst ? Self.newest(update.newEpisodes).map { [$0] } ?? [] : update.newEpisodes
                if !wanted.isEmpty && !newEpisodes(record, wanted) {
                    // Stopping in the middle of the batch: the feed stays as it was known, and
                    // what was not taken is new again at the next start.
                    record = known
                }
            } else {
                outcome = .failed(retryAfter: nil)
            }
        case .notModified(let permanentURL, let validators):
            record.validators.entityTag = validators.entityTag ?? record.validators.entityTag
            record.validators.lastModified = validators.lastModified ?? record.validators.lastModified
            move(&record, to: permanentURL)
            result = .noData
            outcome = .succeeded
        case .failed(let reason, let retryAfter):
            result = .failed(.fetchFailed(reason))
            outcome = .failed(retryAfter: retryAfter)
        }
        record.lastFetched = Date()
        record.lastResult = result.description
        records[feed] = record
        if case .failed = result {
            logger.warning("feed \(RedactedURL.text(feed)): \(result)")
        } else {
            logger.info("feed \(RedactedURL.text(feed)): \(result)")
        }
        save()
        guard !stopped, isCurrent else { return }
        schedule.finished(feed, outcome, at: seconds(clock.now()))
        runDueFetches()
    }

    /// The latest episode: by publication date, else the feed's first (feeds list newest first).
    private static func newest(_ episodes: [Episode]) -> Episode? {
        let dated = episodes.filter { $0.published != nil }
        return dated.max { $0.published! < $1.published! } ?? episodes.first
    }

    /// A permanent redirect: the feed is fetched from `url` from now on.
    private func move(_ record: inout FeedRecord, to url: URL?) {
        guard let url, url != record.state.url else { return }
        logger.info("feed \(RedactedURL.text(record.subscription)): moved permanently to \(RedactedURL.text(url))")
        record.state.url = url
    }

    private func save() {
        guard let store else { return }
        do {
            try store.save(Array(records.values))
        } catch {
            logger.error("feeds: cannot save \(store.file.path): \(ErrorText.describe(error))")
        }
    }

    private func setTimer() {
        timer?.cancel()
        timer = nil
        guard !stopped, let deadline = schedule.nextDeadline() else { return }
        timerGeneration += 1
        let generation = timerGeneration
        // Rounded up, and a microsecond on: the timer never fires before the schedule's own
        // comparison says the fetch is due, so it cannot fire over and over for nothing.
        let nanoseconds = deadline <= 0 ? 0 : UInt64(min((deadline * 1e9).rounded(.up), 1.8e19)) &+ 1_000
        let queue = queue
        timer = clock.schedule(at: nanoseconds, on: timerQueue) { [weak self] in
            queue.async { [weak self] in
                guard let self, generation == timerGeneration else { return }
                timer = nil
                runDueFetches()
            }
        }
    }

    private func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }
}

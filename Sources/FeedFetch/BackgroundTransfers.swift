import Dispatch
import Feeds
import Foundation
import Logging
import QueuePlayer
import Synchronization

/// Background transfer of new episodes' enclosures into the music directory,
/// `Podcasts/<feed>/<episode>.mp3`: the journal of jobs, at most two downloads at a time,
/// retries with back-off, and the hand-over of each finished file, once.
///
/// Transfers go on in every app state, suspended included (suspension stops audio, not
/// transfers), so they take no background task. They survive `kill -9` and restarts: each
/// change of a job is appended to the journal (``TransferJournal``, ``TransferJournalWriter``)
/// before a job's first byte and whenever its validator is learnt, and the `.part` file is
/// resumed (``EnclosureDownloader``).
///
/// A finished `.part` is checked (libmpg123 must open it), renamed into place under a name
/// no other file has, taken out of the journal, and only then reported to `finished`: an
/// episode is reported at most once. A crash between the rename and the journal's write is
/// caught at the next start (the job's file is in place and its `.part` gone).
///
/// State (the jobs, the journal's writer, the retry timer) is owned by ``queue``; the
/// downloads run as Swift tasks. Nothing on the queue is O(jobs) in I/O per event, and naming
/// a batch is linear (``FileNameClaims``): a stop, which waits for the queue, never waits long.
public final class BackgroundTransfers: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The music directory: `Podcasts/` is made in it.
        public var musicDirectory: URL
        /// `--max-download-size`.
        public var maximumSize: Int64
        public var maximumConcurrent: Int
        /// `--download-limit`: per feed, played downloads beyond this many are deleted; nil keeps all.
        public var downloadLimit: Int?
        /// The first retry's delay, doubled per failure in a row up to ``maximumRetryDelay``.
        public var firstRetryDelay: Double
        public var maximumRetryDelay: Double

        public init(musicDirectory: URL, maximumSize: Int64 = 2 << 30, maximumConcurrent: Int = 2,
                    firstRetryDelay: Double = 1, maximumRetryDelay: Double = 300, downloadLimit: Int? = nil) {
            self.downloadLimit = downloadLimit
            self.musicDirectory = musicDirectory
            self.maximumSize = maximumSize
            self.maximumConcurrent = max(1, maximumConcurrent)
            self.firstRetryDelay = firstRetryDelay
            self.maximumRetryDelay = maximumRetryDelay
        }
    }

    /// A failure that is never retried stops a job after this many tries anyway.
    static let maximumFailures = 20

    public let queue: DispatchQueue
    private let timerQueue = DispatchQueue(label: "queueplayerd.transfers.timer")
    private let configuration: Configuration
    private let clock: any PlaybackClock
    private let downloader: EnclosureDownloader
    private let journal: TransferJournalWriter?
    /// `downloads.json`: the downloads per feed and which were played (``DownloadRetention``).
    private let retentionFile: JSONStateFile<DownloadRetention>?
    private var retention = DownloadRetention() {
        didSet {
            let feeds = Dictionary(retention.downloads.flatMap { feed, paths in paths.map { ($0, feed) } }, uniquingKeysWith: { $1 })
            feedsByPath.withLock { $0 = feeds }
        }
    }
    /// ``retention``'s downloads by path, read from any thread (``feed(ofDownload:)``).
    private let feedsByPath = Mutex<[String: String]>([:])
    /// The music directory's path of the item playing now (never deleted), set from the player's side.
    private let current = Mutex<String?>(nil)
    private let deleted: @Sendable (_ relativePath: String) -> Void
    private let logger: Logger
    private let finished: @Sendable (_ relativePath: String, _ file: URL) -> Void
    private let runningCount = Atomic<Int>(0)
    private let runningChanged: @Sendable (_ count: Int) -> Void
    /// Each job's state and bytes, for the web page's list (``TransferProgressBoard``).
    public let progress: TransferProgressBoard

    private var jobs: [TransferJob] = [] {
        didSet { dispatchPrecondition(condition: .onQueue(queue)) }
    }
    /// The jobs' ids and their relative paths: what a new episode or a name is checked against
    /// without a scan of every job.
    private var ids: Set<String> = []
    private var paths: Set<String> = []
    private var running: [String: Task<Void, Never>] = [:]
    /// Jobs waiting for a retry: not before this time (clock seconds).
    private var notBefore: [String: Double] = [:]
    private var timer: (any ScheduledWork)?
    private var stopped = false
    /// Set by ``requestStop()``, from outside the queue.
    private let stopRequested = Atomic<Bool>(false)

    /// `finished` gets each downloaded episode once, on ``queue``.
    /// `deleted` gets each download `--download-limit` deleted, on ``queue``. `retentionFile`
    /// keeps which downloads were played (nil: in memory only). `runningChanged` gets
    /// ``activeCount`` each time a download starts or ends, on ``queue`` (what shows the count
    /// redraws: a paused daemon's status line has no timer of its own). `progress` gets each
    /// job's state as it changes, and its attempts' byte counts.
    public init(configuration: Configuration, clock: any PlaybackClock = RealTimeClock.shared, downloader: EnclosureDownloader,
                journal: TransferJournal?, retentionFile: URL? = nil, progress: TransferProgressBoard = TransferProgressBoard(),
                logger: Logger,
                finished: @escaping @Sendable (_ relativePath: String, _ file: URL) -> Void,
                deleted: @escaping @Sendable (_ relativePath: String) -> Void = { _ in },
                runningChanged: @escaping @Sendable (_ count: Int) -> Void = { _ in }) {
        self.runningChanged = runningChanged
        self.progress = progress
        self.retentionFile = retentionFile.map(JSONStateFile.init(file:))
        self.deleted = deleted
        self.configuration = configuration
        self.clock = clock
        self.downloader = downloader
        let queue = DispatchQueue(label: "queueplayerd.transfers")
        self.queue = queue
        self.journal = journal.map { TransferJournalWriter(journal: $0, queue: queue) }
        self.logger = logger
        self.finished = finished
    }

    /// Downloads running now (`status`'s `transfers`).
    public var activeCount: Int { runningCount.load(ordering: .relaxed) }

    /// Takes up the journal's unfinished jobs.
    public func start() {
        queue.async { [self] in
            if let retentionFile {
                let (saved, problem) = retentionFile.load()
                if let problem { logger.warning("transfers: \(problem)") }
                retention = saved ?? DownloadRetention()
            }
            guard let journal else { return }
            let (saved, changes, problem) = journal.journal.load()
            if let problem { logger.warning("transfers: \(problem)") }
            jobs = saved
            ids = Set(jobs.map(\.id))
            paths = Set(jobs.map(\.relativePath))
            progress.add(jobs)
            if changes > 0 || problem != nil {
                // The last run's changes folded into a new snapshot (a line cut short with them).
                do {
                    try journal.snapshot(jobs)
                } catch {
                    logger.error("transfers: cannot save \(journal.journal.file.path): \(ErrorText.describe(error))")
                }
            }
            if !jobs.isEmpty { logger.info("transfers: \(jobs.count) unfinished, resuming") }
            runDue()
        }
    }

    /// New episodes of `feed` (titled `feedTitle`): each not downloaded yet becomes a job,
    /// written to the journal before this returns. Called from any queue but this one.
    ///
    /// Linear in the episodes: one directory listing and one set of names taken for the batch,
    /// one append to the journal. (A feed of 2,000 new episodes with one title held the queue
    /// for 23 s, and a SIGTERM then crashed the daemon at the service group's deadline.)
    /// Returns false if a stop was asked for before every episode was taken (``requestStop()``):
    /// the caller then keeps them as not yet seen, and they are taken at the next start.
    /// A batch is taken in chunks, the stop checked between two: a feed of many thousand new
    /// episodes never holds a stop for longer than one chunk.
    @discardableResult
    public func enqueue(feed: String, feedTitle: String?, episodes: [Episode]) -> Bool {
        queue.sync {
            guard !stopped else { return false }
            var claims = FileNameClaims(root: configuration.musicDirectory, jobs: paths)
            var added: [TransferJob] = []
            var takenAll = true
            for (index, episode) in episodes.enumerated() {
                if index % Self.enqueueChunk == 0 && stopRequested.load(ordering: .acquiring) {
                    takenAll = false
                    break
                }
                let id = feed + "\n" + episode.id
                guard ids.insert(id).inserted else { continue }
                // MP3 whatever the URL says: the daemon plays MP3 only, and checks what arrived.
                // A name no other job has either: two episodes with one title must not share a `.part`.
                let path = claims.claim(PodcastFileName.relativePath(feedTitle: feedTitle, episodeTitle: episode.title))
                paths.insert(path)
                added.append(TransferJob(id: id, feed: feed, url: episode.enclosure.url, relativePath: path,
                                         title: episode.title, feedTitle: feedTitle, chapters: episode.chapters))
            }
            // What was taken is journaled in one append, also when the batch was cut short.
            if !added.isEmpty {
                jobs.append(contentsOf: added)
                record(added.map(TransferJournal.Change.put))
                progress.add(added)
            }
            if takenAll { runDue() }
            return takenAll
        }
    }

    /// Episodes named between two checks for a stop.
    static let enqueueChunk = 256

    /// Asks a batch being taken (``enqueue(feed:feedTitle:episodes:)``) to end at its next
    /// chunk; from any thread, without waiting for the transfers' queue (which the batch holds).
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// What the journal's writer has written (nil without a journal): for tests.
    var journalStatistics: TransferJournalWriter.Statistics? {
        queue.sync { journal?.statistics }
    }

    /// Stops: running downloads are cancelled (their `.part` files stay for the next start).
    public func stop() async {
        let tasks = await queue.perform { [self] in
            stopped = true
            timer?.cancel()
            timer = nil
            return Array(running.values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    // MARK: - On the queue

    private func url(_ relativePath: String) -> URL {
        configuration.musicDirectory.appendingPathComponent(relativePath)
    }

    /// Appends `changes` (made to ``jobs`` already) to the journal.
    private func record(_ changes: [TransferJournal.Change]) {
        guard let journal else { return }
        do {
            try journal.record(changes, jobs: jobs)
        } catch {
            logger.error("transfers: cannot save \(journal.journal.changesFile.path): \(ErrorText.describe(error))")
        }
    }

    /// Records `jobs[index]` as it is now.
    private func recordJob(at index: Int) {
        record([.put(jobs[index])])
    }

    /// Takes `job` out of the jobs and the journal.
    private func removeJob(_ job: TransferJob, _ final: TransferProgress.State) {
        progress.end(job.id, final)
        jobs.removeAll { $0.id == job.id }
        ids.remove(job.id)
        paths.remove(job.relativePath)
        record([.remove(job.id)])
    }

    private func now() -> Double { Double(clock.now()) / 1e9 }

    private func runDue() {
        guard !stopped else { return }
        let now = now()
        for job in jobs where running[job.id] == nil && running.count < configuration.maximumConcurrent {
            if let time = notBefore[job.id], time > now { continue }
            notBefore[job.id] = nil
            launch(job)
        }
        setTimer()
    }

    private func launch(_ job: TransferJob) {
        // Finished before a crash: moved into place but not yet out of the journal (report it
        // now), or about to be moved (move it now).
        let part = url(job.partPath)
        if job.movingIntoPlace {
            if !FileManager.default.fileExists(atPath: part.path), FileManager.default.fileExists(atPath: url(job.relativePath).path) {
                complete(job, at: url(job.relativePath))
                return
            }
            if FileManager.default.fileExists(atPath: part.path) {
                ended(job.id, .finished)
                return
            }
        }
        logger.info("transfer \(RedactedURL.text(job.url)) -> \(job.relativePath): \(FileManager.default.fileExists(atPath: part.path) ? "resuming" : "starting")")
        runningChanged(runningCount.add(1, ordering: .relaxed).newValue)
        progress.set(job.id, .downloading)
        let (downloader, queue, maximumSize, counter) = (downloader, queue, configuration.maximumSize, progress.counter(for: job.id))
        running[job.id] = Task {
            let outcome = await downloader.download(job, to: part, maximumSize: maximumSize, progress: counter) { [weak self] validators in
                guard let self else { return }
                await withCheckedContinuation { (saved: CheckedContinuation<Void, Never>) in
                    queue.async {
                        self.learnt(validators, for: job.id)
                        saved.resume()
                    }
                }
            }
            queue.async { [self] in
                runningChanged(runningCount.subtract(1, ordering: .relaxed).newValue)
                running[job.id] = nil
                ended(job.id, outcome)
            }
        }
    }

    private func learnt(_ validators: FeedValidators, for id: String) {
        guard let index = jobs.firstIndex(where: { $0.id == id }) else { return }
        jobs[index].validators = validators
        recordJob(at: index)
    }

    private func ended(_ id: String, _ outcome: EnclosureDownloader.Outcome) {
        guard let index = jobs.firstIndex(where: { $0.id == id }) else { return }
        var job = jobs[index]
        switch outcome {
        case .finished:
            do {
                _ = try MPG123Decoder(url: url(job.partPath))
            } catch {
                try? FileManager.default.removeItem(at: url(job.partPath))
                drop(job, because: "not an MP3 libmpg123 can open (\(error))")
                return
            }
            // The name it gets, written down before the move: a crash after it is recognised.
            let destination = freeName(for: job.relativePath)
            paths.remove(job.relativePath)
            paths.insert(destination)
            job.relativePath = destination
            progress.rename(job.id, to: destination)
            job.movingIntoPlace = true
            jobs[index] = job
            recordJob(at: index)
            do {
                try FileManager.default.createDirectory(at: url(destination).deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.moveItem(at: url(job.partPath), to: url(destination))
            } catch {
                jobs[index].movingIntoPlace = false
                retry(index, because: "cannot move it into place: \(ErrorText.describe(error))")
                runDue()
                return
            }
            complete(job, at: url(destination))
        case .retry(let why):
            if stopped { return }
            retry(index, because: why)
        case .failed(let why):
            drop(job, because: why)
        }
        runDue()
    }

    /// The job is done: out of the journal, then reported (once).
    private func complete(_ job: TransferJob, at file: URL) {
        removeJob(job, .finished)
        logger.info("transfer finished: \(job.relativePath)")
        if let chapters = job.chapters {
            let (downloader, logger) = (downloader, logger)
            Task { await downloader.saveChapters(from: chapters, beside: file, logger: logger) }
        }
        // Known as its feed's before it is handed over: it may play at once, at its feed's rate.
        retention.downloaded(job.relativePath, feed: job.feed)
        finished(job.relativePath, file)
        saveRetention()
        enforceLimit()
    }

    // MARK: - --download-limit

    /// The feed (its subscription URL) `relativePath` was downloaded for; nil if it is not a download kept.
    public func feed(ofDownload relativePath: String) -> String? {
        feedsByPath.withLock { $0[relativePath] }
    }

    /// The item playing now changed (its path in the music directory, nil when none or not in it).
    public func setCurrent(_ relativePath: String?) {
        current.withLock { $0 = relativePath }
    }

    /// `relativePath` played to its end: if it is a download, it may now be deleted.
    public func played(_ relativePath: String) {
        queue.async { [self] in
            guard retention.played(relativePath) else { return }
            saveRetention()
            enforceLimit()
        }
    }

    private func saveRetention() {
        guard let retentionFile else { return }
        do {
            try retentionFile.save(retention)
        } catch {
            logger.error("transfers: cannot save \(retentionFile.file.path): \(ErrorText.describe(error))")
        }
    }

    private func enforceLimit() {
        guard let limit = configuration.downloadLimit else { return }
        let surplus = retention.surplus(limit: limit, current: current.withLock { $0 })
        guard !surplus.isEmpty else { return }
        for path in surplus {
            do {
                try FileManager.default.removeItem(at: url(path))
            } catch CocoaError.fileNoSuchFile {
                // Gone already (deleted by hand): forgotten all the same.
            } catch {
                logger.warning("transfers: cannot delete \(path) (--download-limit \(limit)): \(ErrorText.describe(error))")
                continue
            }
            // Its chapters file goes with it (most episodes have none).
            try? FileManager.default.removeItem(at: url(ChaptersFile.relativePath(forEpisode: path)))
            retention.removed(path)
            logger.info("deleted \(path): played, and over --download-limit \(limit) for its feed")
            deleted(path)
        }
        saveRetention()
    }

    private func drop(_ job: TransferJob, because why: String) {
        removeJob(job, .failed(why))
        try? FileManager.default.removeItem(at: url(job.partPath))
        logger.warning("transfer \(RedactedURL.text(job.url)) failed: \(why)")
    }

    private func retry(_ index: Int, because why: String) {
        jobs[index].failures += 1
        let job = jobs[index]
        guard job.failures < Self.maximumFailures else {
            drop(job, because: "\(why); gave up after \(job.failures) tries")
            return
        }
        recordJob(at: index)
        let delay = min(configuration.firstRetryDelay * Double(UInt64(1) << UInt64(min(job.failures - 1, 30))), configuration.maximumRetryDelay)
        notBefore[job.id] = now() + delay
        progress.set(job.id, .waiting(why))
        logger.warning("transfer \(RedactedURL.text(job.url)): \(why); trying again in \(Int(delay.rounded(.up))) s")
    }

    /// A finished job's own name (`path`), or, if a file took it meanwhile, `path` with ` (2)`,
    /// ` (3)`, ... before its extension: a name no file and no other job has. Job names are
    /// unique, so only its own may be in ``paths``.
    private func freeName(for path: String) -> String {
        var candidate = path
        var number = 1
        while FileManager.default.fileExists(atPath: url(candidate).path) || (candidate != path && paths.contains(candidate)) {
            number += 1
            candidate = FileNameClaims.numbered(path, number)
        }
        return candidate
    }

    private func setTimer() {
        timer?.cancel()
        timer = nil
        let waiting = jobs.filter { running[$0.id] == nil }.compactMap { notBefore[$0.id] }
        guard !stopped, running.count < configuration.maximumConcurrent, let deadline = waiting.min() else { return }
        let queue = queue
        timer = clock.schedule(at: UInt64(max(0, deadline) * 1e9) + 1_000, on: timerQueue) { [weak self] in
            queue.async { [weak self] in self?.runDue() }
        }
    }
}

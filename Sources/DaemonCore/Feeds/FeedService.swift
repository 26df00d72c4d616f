import FeedFetch
import Feeds
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Logging
import NIOCore
import Synchronization

/// The daemon's podcast feeds: where the subscriptions come from (`--feed`, the feeds file,
/// read again on SIGHUP), the fetcher that keeps them fresh in every app state, the remote
/// notifications that ask it to fetch now, and the downloads of new episodes.
///
/// Immutable once made; the state is the ``BackgroundFetcher``'s and the
/// ``BackgroundTransfers``', each on its own queue. Both HTTP clients run on the event loop
/// group they are given (the control socket's): the feeds add queues, no event loop.
final class FeedService: Sendable {
    /// `--feed`, `--fetch-interval`, `--fetch-timeout`, the feeds file, and the downloads' options.
    struct Options: Sendable {
        /// `--feed URL`, in order.
        var feeds: [URL]
        /// `--feed "URL rate=R"`: the playback rate of those feeds' episodes.
        var rates: [URL: Double] = [:]
        /// `$XDG_CONFIG_HOME/queueplayerd/feeds`.
        var file: URL
        /// Seconds; nil with `never`.
        var interval: Double?
        /// Seconds each fetch may take.
        var timeout: Double
        /// Where new episodes are downloaded (`Podcasts/` in it); nil: they are not.
        var musicDirectory: URL?
        /// `--max-download-size`, bytes.
        var maximumDownloadSize: Int64
        /// `--download-limit`: played downloads kept per feed; nil keeps all.
        var downloadLimit: Int?
        /// `--min-free-space`, bytes: downloads stop before the music directory's file system has less.
        var minimumFreeSpace: Int64
    }

    let fetcher: BackgroundFetcher
    /// New episodes' downloads; nil without a music directory.
    let transfers: BackgroundTransfers?
    /// The feeds' HTTP client, which remote playlists are fetched with too.
    let http: HTTPFeedFetcher
    private let downloader: EnclosureDownloader
    private let options: Options
    private let logger: Logger
    /// Each feed's playback rate (`--feed` and the feeds file's `rate=R`), by subscription URL.
    private let rates = RateTable()

    /// The feeds' rates: written where the subscriptions are read (the fetcher's queue), read
    /// where an item becomes current (the partition's queue).
    private final class RateTable: Sendable {
        let byFeed = Mutex<[String: Double]>([:])
    }

    /// - Parameters:
    ///   - stateDirectory: where `feeds.json` and `transfers.json` are kept; nil keeps them in memory only.
    ///   - downloaded: gets each episode downloaded (its path in the music directory and its
    ///     file), once, on the transfers' queue.
    ///   - deleted: gets each download `--download-limit` deleted, on the transfers' queue.
    ///   - transfersChanged: gets the number of downloads running when a download starts or ends,
    ///     on the transfers' queue.
    ///   - transferProgress: gets the downloads' states and byte counts (the web page's list).
    init(options: Options, eventLoopGroup: any EventLoopGroup, stateDirectory: URL?, host: any BackgroundFetchHost,
         transferProgress: TransferProgressBoard = TransferProgressBoard(), logger: Logger,
         downloaded: @escaping @Sendable (_ relativePath: String, _ file: URL) -> Void,
         deleted: @escaping @Sendable (_ relativePath: String) -> Void,
         transfersChanged: @escaping @Sendable (_ running: Int) -> Void = { _ in }) {
        self.options = options
        self.logger = logger
        http = HTTPFeedFetcher(eventLoopGroup: eventLoopGroup)
        let downloader = EnclosureDownloader(eventLoopGroup: eventLoopGroup, minimumFreeSpace: options.minimumFreeSpace)
        self.downloader = downloader
        let transfers = options.musicDirectory.map { directory in
            BackgroundTransfers(configuration: .init(musicDirectory: directory, maximumSize: options.maximumDownloadSize,
                                                     downloadLimit: options.downloadLimit),
                                downloader: downloader,
                                journal: stateDirectory.map { TransferJournal(file: $0.appendingPathComponent("transfers.json")) },
                                retentionFile: stateDirectory?.appendingPathComponent("downloads.json"),
                                progress: transferProgress, logger: logger, finished: downloaded, deleted: deleted,
                                runningChanged: transfersChanged)
        }
        self.transfers = transfers
        fetcher = BackgroundFetcher(
            configuration: .init(rules: .init(interval: options.interval), timeout: options.timeout),
            fetcher: http as any FeedFetching, store: stateDirectory.map { FeedRecordStore(file: $0.appendingPathComponent("feeds.json")) },
            host: host, logger: logger) { record, episodes in
                transfers?.enqueue(feed: record.subscription.absoluteString, feedTitle: record.state.title, episodes: episodes) ?? true
            }
    }

    /// Reads the subscriptions and starts fetching (a feed never fetched is fetched at once).
    func start() {
        transfers?.start()
        reloadSubscriptions(reason: nil)
    }

    /// SIGHUP: the feeds file is read again; feeds added are fetched, feeds removed no longer.
    /// The file is read on the fetcher's queue, not the caller's.
    func reloadSubscriptions(reason: String? = "SIGHUP") {
        let (options, logger, rates) = (options, logger, rates)
        fetcher.setSubscriptions(reading: { () -> [URL] in
            let list = FeedSubscriptionList(contentsOf: options.file)
            for problem in list.problems {
                logger.warning("feeds file \(options.file.path): \(problem) (skipped)")
            }
            // `--feed`'s rate wins over the file's, as its URL comes first.
            let merged = list.rates.merging(options.rates) { $1 }
            rates.byFeed.withLock { $0 = Dictionary(merged.map { ($0.key.absoluteString, $0.value) }, uniquingKeysWith: { $1 }) }
            var urls = options.feeds
            for url in list.urls where !urls.contains(url) { urls.append(url) }
            let interval = options.interval.map { "every \(Self.format($0)) s at most" } ?? "only on remote notifications"
            logger.info("feeds: \(urls.count) subscribed\(reason.map { " (\($0))" } ?? ""), fetched \(interval)")
            return urls
        })
    }

    /// `url`'s path in the music directory (`Podcasts/...`), nil if it is not in it.
    func libraryPath(of url: URL) -> String? {
        guard let root = options.musicDirectory?.standardizedFileURL.path else { return nil }
        let path = url.standardizedFileURL.path
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : nil
    }

    /// The playback rate of the feed `url` (a file) was downloaded for; nil when it is not a
    /// download or its feed has no rate. Any thread.
    func rate(of url: URL) -> Double? {
        guard let path = libraryPath(of: url), let feed = transfers?.feed(ofDownload: path) else { return nil }
        return rates.byFeed.withLock { $0[feed] }
    }

    /// The player's current item changed: `--download-limit` never deletes it.
    func playerDidChangeItem(to url: URL?) {
        transfers?.setCurrent(url.flatMap(libraryPath(of:)))
    }

    /// An item played to its end: a download that did may be deleted by `--download-limit`.
    func playerDidPlayToEnd(_ url: URL) {
        if let path = libraryPath(of: url) { transfers?.played(path) }
    }

    /// A message on the channel `queueplayerd`: an APNs-shaped silent push.
    func handleRemoteNotification(_ text: String) {
        switch RemoteNotification(message: text) {
        case .fetch(let feed):
            fetcher.push(feed: feed)
        case .ignored(let why):
            logger.info("remote notification ignored: \(why)")
        case .malformed(let why):
            logger.warning("remote notification not understood (\(why)): nothing changes")
        }
    }

    /// Stops fetching (a fetch under way is cancelled) and closes the HTTP client's connections.
    func stop() async {
        // First, without waiting: a batch of new episodes being named ends at its next chunk,
        // which lets the fetcher's queue go on to its stop.
        transfers?.requestStop()
        await fetcher.stop()
        await transfers?.stop()
        do {
            try await http.shutdown()
        } catch {
            logger.warning("feeds: the HTTP client did not close cleanly: \(error)")
        }
        do {
            try await downloader.shutdown()
        } catch {
            logger.warning("transfers: the HTTP client did not close cleanly: \(error)")
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }
}

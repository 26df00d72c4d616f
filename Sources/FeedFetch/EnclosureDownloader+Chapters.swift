import AsyncHTTPClient
import Feeds
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import LazyHTTP
import NIOCore
import NIOHTTP1
import QueuePlayer

extension EnclosureDownloader {
    /// Fetches an episode's chapters file (`podcast:chapters`) and keeps it beside the episode
    /// file at `episode` (``Feeds/ChaptersFile``), so that its chapters work offline. One
    /// attempt, after the audio is in place: a chapters file that cannot be had is logged and
    /// the episode plays without it (or with its ID3 chapters). A body over
    /// ``QueuePlayer/PodcastChapters/maximumSize`` is refused as it arrives; one that is not
    /// a chapters file is kept all the same (the player names it in a warning when it plays).
    public func saveChapters(from url: URL, beside episode: URL, logger: Logger) async {
        let destination = ChaptersFile.url(forEpisode: episode)
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.headers.add(name: "User-Agent", value: HTTPFeedFetcher.userAgent)
            let response = try await client.client().execute(request, deadline: .now() + .nanoseconds(Int64(limits.headerTimeout * 1e9)))
            guard response.status == .ok else {
                logger.warning("chapters of \(episode.lastPathComponent): \(RedactedURL.text(url)) answered \(response.status.code)")
                return
            }
            var body = Data()
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= PodcastChapters.maximumSize else {
                    logger.warning("chapters of \(episode.lastPathComponent): \(RedactedURL.text(url)) is larger than \(PodcastChapters.maximumSize) bytes; not kept")
                    return
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
            try body.write(to: destination, options: .atomic)
            logger.info("chapters of \(episode.lastPathComponent) kept in \(destination.lastPathComponent)")
        } catch {
            logger.warning("chapters of \(episode.lastPathComponent): \(RedactedURL.text(url)) could not be fetched: \(ErrorText.describe(error))")
        }
    }
}

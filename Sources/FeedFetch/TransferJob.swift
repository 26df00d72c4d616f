#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One enclosure to download, as the journal keeps it across restarts and `kill -9`.
///
/// What arrived so far is the `.part` file beside the destination (its size is the offset a
/// resumed request asks for); the job keeps what the file cannot say: where it comes from,
/// the validator of the first response (`If-Range`: resume only the same version of the
/// file), and how often it was tried.
public struct TransferJob: Codable, Sendable, Equatable, Identifiable {
    /// The feed's subscription URL and the episode's identity: an episode is downloaded once.
    public var id: String
    /// The feed's subscription URL (its downloads are counted together for `--download-limit`).
    public var feed: String
    /// The enclosure.
    public var url: URL
    /// `Podcasts/<feed>/<episode>.mp3`, relative to the music directory (``Feeds/PodcastFileName``).
    public var relativePath: String
    /// `ETag` (else `Last-Modified`) of the response the `.part` file holds the start of.
    public var validators: FeedValidators
    /// Failed attempts in a row (connection lost, server error): the back-off grows with them.
    public var failures: Int
    /// Set (and saved) just before the `.part` file is renamed to `relativePath`: a start that
    /// finds it set, the `.part` gone and the file there knows the download had finished.
    public var movingIntoPlace: Bool
    /// The episode's and the feed's titles, for the list of downloads (nil in a journal written
    /// before they were kept).
    public var title: String?
    public var feedTitle: String?
    /// The episode's chapters file (`podcast:chapters`), fetched once the audio is in place.
    public var chapters: URL?

    public init(id: String, feed: String, url: URL, relativePath: String, title: String? = nil, feedTitle: String? = nil,
                chapters: URL? = nil) {
        self.chapters = chapters
        self.title = title
        self.feedTitle = feedTitle
        self.id = id
        self.feed = feed
        self.url = url
        self.relativePath = relativePath
        validators = FeedValidators()
        failures = 0
        movingIntoPlace = false
    }

    /// The file that collects the body: the destination with `.part` added.
    public var partPath: String { relativePath + ".part" }

    /// The `If-Range` value: the entity tag if the server gave a strong one, else the date.
    var ifRange: String? {
        if let tag = validators.entityTag, !tag.hasPrefix("W/") { return tag }
        return validators.lastModified
    }
}

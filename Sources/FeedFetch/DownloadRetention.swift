/// Which downloaded episodes `--download-limit N` deletes: per feed, the oldest downloads
/// beyond N that have been played to their end, never the one playing now.
///
/// A value with no file system, so the rule users care about (nothing unheard is deleted,
/// nor what plays) is stated and tested alone; ``BackgroundTransfers`` keeps it in
/// `downloads.json` and deletes what ``surplus(limit:current:)`` names.
public struct DownloadRetention: Codable, Sendable, Equatable {
    /// Per feed (subscription URL), its downloads' paths in the music directory, oldest first.
    public private(set) var downloads: [String: [String]] = [:]
    /// The downloads played to their end.
    public private(set) var played: Set<String> = []

    public init() {}

    /// `path` was downloaded for `feed`.
    public mutating func downloaded(_ path: String, feed: String) {
        downloads[feed, default: []].removeAll { $0 == path }
        downloads[feed, default: []].append(path)
    }

    /// `path` played to its end; returns false if it is not a download (nothing changes).
    @discardableResult
    public mutating func played(_ path: String) -> Bool {
        guard downloads.values.contains(where: { $0.contains(path) }) else { return false }
        return played.insert(path).inserted
    }

    /// The downloads to delete so that each feed keeps at most `limit`: the oldest played
    /// ones, skipping `current`. Fewer (or none) when not enough have been played.
    public func surplus(limit: Int, current: String?) -> [String] {
        downloads.keys.sorted().flatMap { feed -> [String] in
            let paths = downloads[feed] ?? []
            let excess = paths.count - max(0, limit)
            guard excess > 0 else { return [] }
            return Array(paths.filter { played.contains($0) && $0 != current }.prefix(excess))
        }
    }

    /// `path` is gone (deleted): it is forgotten.
    public mutating func removed(_ path: String) {
        for feed in downloads.keys { downloads[feed]?.removeAll { $0 == path } }
        downloads = downloads.filter { !$0.value.isEmpty }
        played.remove(path)
    }
}

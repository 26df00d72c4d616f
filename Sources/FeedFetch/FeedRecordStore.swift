import Foundation

/// The subscriptions' records on disk: `feeds.json` in the state directory, written whole
/// and atomically (a temporary file renamed over the old one).
///
/// A file that cannot be read back is moved aside (`feeds.json.unusable-<time>`), not
/// overwritten: what it held may still be wanted, and the daemon starts with none.
/// Not thread-safe: its owner (``BackgroundFetcher``'s queue) calls it from one queue.
public struct FeedRecordStore: Sendable {
    public let file: URL

    public init(file: URL) {
        self.file = file
    }

    /// The records saved, by subscription URL; empty when there is no file. `problem` says
    /// why a file that exists was not usable.
    public func load() -> (records: [URL: FeedRecord], problem: String?) {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch CocoaError.fileReadNoSuchFile {
            return ([:], nil)
        } catch {
            return ([:], "cannot read \(file.path): \(error.localizedDescription)")
        }
        do {
            let records = try JSONDecoder.feeds.decode([FeedRecord].self, from: data)
            return (Dictionary(records.map { ($0.subscription, $0) }, uniquingKeysWith: { _, last in last }), nil)
        } catch {
            let aside = file.appendingPathExtension("unusable-\(Int(Date().timeIntervalSince1970))")
            try? FileManager.default.moveItem(at: file, to: aside)
            return ([:], "\(file.path) is not usable (moved to \(aside.lastPathComponent)): \(error)")
        }
    }

    /// Writes `records`, sorted by subscription so that the file changes only where they do.
    public func save(_ records: [FeedRecord]) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let sorted = records.sorted { $0.subscription.absoluteString < $1.subscription.absoluteString }
        try JSONEncoder.feeds.encode(sorted).write(to: file, options: .atomic)
    }
}

extension JSONEncoder {
    /// Dates as ISO 8601 text, keys sorted: a file a person can read and diff.
    static var feeds: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return encoder
    }
}

extension JSONDecoder {
    static var feeds: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The subscriptions' records on disk: `feeds.json` in the state directory (a
/// ``JSONStateFile``: atomic writes, an unreadable file moved aside).
public struct FeedRecordStore: Sendable {
    private let storage: JSONStateFile<[FeedRecord]>
    public var file: URL { storage.file }

    public init(file: URL) {
        storage = JSONStateFile(file: file)
    }

    /// The records saved, by subscription URL; empty when there is no file. `problem` says
    /// why a file that exists was not usable.
    public func load() -> (records: [URL: FeedRecord], problem: String?) {
        let (records, problem) = storage.load()
        return (Dictionary((records ?? []).map { ($0.subscription, $0) }, uniquingKeysWith: { _, last in last }), problem)
    }

    /// Writes `records`, sorted by subscription so that the file changes only where they do.
    public func save(_ records: [FeedRecord]) throws {
        try storage.save(records.sorted { $0.subscription.absoluteString < $1.subscription.absoluteString })
    }
}

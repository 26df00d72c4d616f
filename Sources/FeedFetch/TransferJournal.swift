import Foundation

/// The transfers not finished yet, in `transfers.json` in the state directory (a
/// ``JSONStateFile``), written after every change that matters for a restart: a job added,
/// its validator learnt, the job done.
///
/// An unreadable journal is moved aside with a warning that says where: the `.part` files it
/// described stay, and a later fetch does not bring their episodes back (they are known).
public struct TransferJournal: Sendable {
    private let storage: JSONStateFile<[TransferJob]>
    public var file: URL { storage.file }

    public init(file: URL) {
        storage = JSONStateFile(file: file)
    }

    /// The jobs saved, in order; `problem` says why an existing file was not usable.
    public func load() -> (jobs: [TransferJob], problem: String?) {
        let (jobs, problem) = storage.load()
        return (jobs ?? [], problem)
    }

    public func save(_ jobs: [TransferJob]) throws {
        try storage.save(jobs)
    }
}

import Foundation

/// The transfers not finished yet, in the state directory: `transfers.json`, a snapshot of
/// every job (a ``JSONStateFile``), and `transfers.jsonl` beside it, the changes since that
/// snapshot, one JSON line each (a job put, with all its fields, or a job removed).
///
/// Each change that matters for a restart (a job added, its validator learnt, its move into
/// place, the job done) is appended as it happens: one write of one line, whatever the number
/// of jobs. (The whole journal was rewritten per change: 10,000 queued episodes, a 3.5 MB
/// journal, wrote 1 GB in 32 s while 95 of them finished.) Appending, not rewriting at most
/// once a second, because some changes must be on disk before the next step: a job's
/// `movingIntoPlace` before its rename (a restart that missed it would download the episode
/// again under another name), the jobs of new episodes before `feeds.json` says they are known.
/// The snapshot is rewritten (``TransferJournalWriter``) when the changes outnumber twice the
/// jobs, so its cost per change stays constant, and at start.
///
/// Replaying the changes over the snapshot is idempotent (a put sets the whole job, a remove
/// deletes it): a crash between a new snapshot and the truncation of the changes loses
/// nothing. A last line cut short by a crash is ignored.
///
/// An unreadable snapshot is moved aside with a warning that says where: the `.part` files it
/// described stay, and a later fetch does not bring their episodes back (they are known).
public struct TransferJournal: Sendable {
    /// One change, one line of `transfers.jsonl`.
    struct Change: Codable, Equatable {
        var put: TransferJob?
        var remove: String?

        static func put(_ job: TransferJob) -> Change { Change(put: job, remove: nil) }
        static func remove(_ id: String) -> Change { Change(put: nil, remove: id) }
    }

    let storage: JSONStateFile<[TransferJob]>
    /// The snapshot, `transfers.json`.
    public var file: URL { storage.file }
    /// The changes since the snapshot, `transfers.jsonl`.
    public var changesFile: URL { file.deletingPathExtension().appendingPathExtension("jsonl") }

    public init(file: URL) {
        storage = JSONStateFile(file: file)
    }

    /// The jobs saved, in order; `changes` is how many lines were replayed over the
    /// snapshot; `problem` says why something that exists was not usable.
    public func load() -> (jobs: [TransferJob], changes: Int, problem: String?) {
        let (snapshot, problem) = storage.load()
        var jobs = snapshot ?? []
        let data: Data
        do {
            data = try Data(contentsOf: changesFile)
        } catch CocoaError.fileReadNoSuchFile {
            return (jobs, 0, problem)
        } catch {
            return (jobs, 0, [problem, "cannot read \(changesFile.path): \(ErrorText.describe(error))"].compactMap { $0 }.joined(separator: "; "))
        }
        // In the snapshot's order, a job put for the first time at the end; a removed one
        // leaves a hole, so that each change costs the same whatever the number of jobs.
        var slots: [TransferJob?] = jobs
        var position = Dictionary(jobs.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        var replayed = 0
        var linesProblem: String?
        for (number, line) in lines.enumerated() {
            guard let change = try? JSONDecoder.feeds.decode(Change.self, from: Data(line)) else {
                // The last line may have been cut short by a crash: nothing was lost with it.
                if number < lines.count - 1 {
                    linesProblem = "\(changesFile.path): line \(number + 1) of \(lines.count) is not readable; it and the ones after it are ignored"
                }
                break
            }
            replayed += 1
            if let job = change.put {
                if let slot = position[job.id] {
                    slots[slot] = job
                } else {
                    position[job.id] = slots.count
                    slots.append(job)
                }
            } else if let id = change.remove, let slot = position.removeValue(forKey: id) {
                slots[slot] = nil
            }
        }
        jobs = slots.compactMap { $0 }
        return (jobs, replayed, [problem, linesProblem].compactMap { $0 }.joined(separator: "; ").nilIfEmpty)
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Writes a ``TransferJournal``: each change appended to `transfers.jsonl` (one `write(2)`
/// of its lines, through a descriptor kept open), and the snapshot `transfers.json` rewritten
/// only when the changes outnumber twice the jobs (and at least ``minimumChangesBeforeSnapshot``):
/// the snapshot costs O(jobs), but only after that many changes, so a change costs the same
/// whatever the number of jobs.
///
/// Owned by the transfers queue (`queueplayerd.transfers`), which every method asserts.
final class TransferJournalWriter: @unchecked Sendable {
    /// What was written, for tests and for the log: the seam that shows a change's cost.
    struct Statistics: Equatable {
        /// `write(2)` calls on the changes file, and their bytes.
        var appends = 0
        var appendedBytes = 0
        /// Snapshots written whole, and their bytes.
        var snapshots = 0
        var snapshotBytes = 0
    }

    static let minimumChangesBeforeSnapshot = 1024

    let journal: TransferJournal
    private let queue: DispatchQueue
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private var descriptor: Int32 = -1
    /// The changes file's size after the last whole append: a write that fails half-way is cut
    /// back to it, so no torn line is ever followed by good ones.
    private var size: off_t = 0
    /// Lines in the changes file (replayed at load, or appended since).
    private var changes: Int
    private(set) var statistics = Statistics()

    /// `changes`: the lines the changes file holds already (``TransferJournal/load()``'s).
    init(journal: TransferJournal, queue: DispatchQueue, changes: Int = 0) {
        self.journal = journal
        self.queue = queue
        self.changes = changes
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Appends `changes`; `jobs` (the jobs after them) is written as the new snapshot instead
    /// when the changes file has grown past twice their number.
    func record(_ changes: [TransferJournal.Change], jobs: [TransferJob]) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !changes.isEmpty else { return }
        if self.changes + changes.count > max(Self.minimumChangesBeforeSnapshot, 2 * jobs.count) {
            try snapshot(jobs)
            return
        }
        var data = Data()
        for change in changes {
            data.append(try encoder.encode(change))
            data.append(UInt8(ascii: "\n"))
        }
        try append(data)
        self.changes += changes.count
    }

    /// Writes `jobs` as the snapshot and empties the changes file. At start (a changes file
    /// left by the last run is folded in, a line cut short by a crash with it) and when the
    /// changes have grown.
    func snapshot(_ jobs: [TransferJob]) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        let data = try JSONEncoder.feeds.encode(jobs)
        try journal.storage.save(data: data)
        statistics.snapshots += 1
        statistics.snapshotBytes += data.count
        // Emptied after the snapshot is in place: a crash between the two replays changes the
        // snapshot has already, which is harmless (a change sets or removes a whole job).
        let descriptor = try open()
        guard ftruncate(descriptor, 0) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: Glibc.errno) ?? .EIO) }
        size = 0
        changes = 0
    }

    private func open() throws -> Int32 {
        if descriptor >= 0 { return descriptor }
        try FileManager.default.createDirectory(at: journal.changesFile.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let opened = Glibc.open(journal.changesFile.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: Glibc.errno) ?? .EIO) }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            let code = Glibc.errno
            Glibc.close(opened)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        size = info.st_size
        descriptor = opened
        return opened
    }

    private func append(_ data: Data) throws {
        let descriptor = try open()
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    let code = Glibc.errno
                    if code == EINTR { continue }
                    _ = ftruncate(descriptor, size)
                    throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
                }
                offset += written
            }
        }
        size += off_t(data.count)
        statistics.appends += 1
        statistics.appendedBytes += data.count
    }
}

import Synchronization

/// The downloads as they are now, for whoever shows them (the web page's list): changed by the
/// transfers' queue at each change of a download's state, and by a download's body loop per
/// chunk (one relaxed atomic store in its ``Counter``, nothing else: reporting must not slow
/// the download), read from any thread by a publisher that samples it at its own pace
/// (``snapshot(limit:)``), so that bytes arriving never cost a hop to another queue.
///
/// State is one `Mutex`, held for a copy or a change of one entry; the observer is called after
/// it is let go, on the thread that made the change (the transfers' queue).
public final class TransferProgressBoard: Sendable {
    /// The byte counts of one download: written by its attempt's body loop, read by ``snapshot(limit:)``.
    public final class Counter: Sendable {
        private let receivedBytes = Atomic<Int64>(0)
        /// -1: not known.
        private let expectedBytes = Atomic<Int64>(-1)

        public init() {}

        /// An attempt starts with `received` bytes in the `.part` file, of `expected`.
        public func begin(received: Int64, expected: Int64?) {
            receivedBytes.store(received, ordering: .relaxed)
            expectedBytes.store(expected ?? -1, ordering: .relaxed)
        }

        /// The `.part` file holds `bytes` now.
        public func received(_ bytes: Int64) {
            receivedBytes.store(bytes, ordering: .relaxed)
        }

        var received: Int64 { receivedBytes.load(ordering: .relaxed) }
        var expected: Int64? {
            let value = expectedBytes.load(ordering: .relaxed)
            return value < 0 ? nil : value
        }
    }

    /// What ``snapshot(limit:)`` returns.
    public struct Snapshot: Sendable, Equatable {
        /// At most the limit asked for: the downloads running, then those waiting for a retry,
        /// then those ended lately (newest first, at most ``TransferProgressBoard/endedKept``),
        /// then the queued ones, oldest first.
        public var downloads: [TransferProgress] = []
        /// Downloads running, waiting for a retry, and queued: all of them, listed or not.
        public var active = 0
        public var waiting = 0
        public var queued = 0

        public init() {}
    }

    /// Ended downloads (done or failed) kept for the list, newest first.
    public static let endedKept = 8

    private struct Entry {
        var progress: TransferProgress
        let counter = Counter()
        /// When it was added: the queued ones are listed in this order, as they are taken.
        let order: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var ended: [TransferProgress] = []
        var nextNumber = 1
        var observer: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// `observer` is called after each change of a download's state (not of its byte count),
    /// on the transfers' queue: it must not block.
    public func setObserver(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observer = observer }
    }

    /// The downloads now (see ``Snapshot/downloads`` for which, in which order).
    public func snapshot(limit: Int) -> Snapshot {
        state.withLock { state in
            var snapshot = Snapshot()
            var running: [Entry] = [], waiting: [Entry] = [], queued: [Entry] = []
            for entry in state.entries.values {
                switch entry.progress.state {
                case .downloading: running.append(entry)
                case .waiting: waiting.append(entry)
                default: queued.append(entry)
                }
            }
            snapshot.active = running.count
            snapshot.waiting = waiting.count
            snapshot.queued = queued.count
            func current(_ entry: Entry) -> TransferProgress {
                var progress = entry.progress
                progress.received = entry.counter.received
                progress.expected = entry.counter.expected
                return progress
            }
            for entry in running.sorted(by: { $0.order < $1.order }) + waiting.sorted(by: { $0.order < $1.order })
            where snapshot.downloads.count < limit {
                snapshot.downloads.append(current(entry))
            }
            snapshot.downloads += state.ended.prefix(max(0, limit - snapshot.downloads.count))
            let room = max(0, limit - snapshot.downloads.count)
            if room > 0 { snapshot.downloads += queued.sorted { $0.order < $1.order }.prefix(room).map(current) }
            return snapshot
        }
    }

    // MARK: - From the transfers' queue

    /// New jobs, queued.
    func add(_ jobs: [TransferJob]) {
        guard !jobs.isEmpty else { return }
        change { state in
            for job in jobs where state.entries[job.id] == nil {
                let number = state.nextNumber
                state.nextNumber += 1
                state.entries[job.id] = Entry(progress: TransferProgress(number: number, title: job.title, feedTitle: job.feedTitle,
                                                                         relativePath: job.relativePath, state: .queued),
                                              order: number)
            }
        }
    }

    /// The job's counter, for its attempt's body loop (nil for a job the board does not have).
    func counter(for id: String) -> Counter? {
        state.withLock { $0.entries[id]?.counter }
    }

    /// The job is now `newState` (downloading, waiting, queued).
    func set(_ id: String, _ newState: TransferProgress.State) {
        change { state in
            state.entries[id]?.progress.state = newState
        }
    }

    /// The job is in the music directory as `relativePath`.
    func rename(_ id: String, to relativePath: String) {
        state.withLock { $0.entries[id]?.progress.relativePath = relativePath }
    }

    /// The job ended (done or failed): it leaves the running list for the ended ones.
    func end(_ id: String, _ final: TransferProgress.State) {
        change { state in
            guard let entry = state.entries.removeValue(forKey: id) else { return }
            var progress = entry.progress
            progress.received = entry.counter.received
            progress.expected = entry.counter.expected
            if case .finished = final, let expected = progress.expected { progress.received = expected }
            progress.state = final
            state.ended.insert(progress, at: 0)
            if state.ended.count > Self.endedKept { state.ended.removeLast(state.ended.count - Self.endedKept) }
        }
    }

    private func change(_ body: (inout State) -> Void) {
        let observer = state.withLock { state in
            body(&state)
            return state.observer
        }
        observer?()
    }
}

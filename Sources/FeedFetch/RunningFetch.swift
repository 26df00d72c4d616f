import Synchronization

/// One fetch in progress: its task, and why it was cancelled, if it was.
///
/// The expiration handler cancels it from the application's queue while the fetcher's queue
/// owns the rest: the state is under a `Mutex`.
final class RunningFetch: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, reason: String?)>((nil, nil))

    var isCancelled: Bool { state.withLock { $0.reason != nil } }
    var cancellationReason: String? { state.withLock { $0.reason } }

    func setTask(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state in
            state.task = task
            return state.reason != nil
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the fetch (the first reason given is kept); returns its task, to wait for.
    @discardableResult
    func cancel(because reason: String) -> Task<Void, Never>? {
        let task = state.withLock { state in
            if state.reason == nil { state.reason = reason }
            return state.task
        }
        task?.cancel()
        return task
    }
}

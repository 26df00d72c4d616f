import Dispatch

extension DispatchQueue {
    /// Runs `body` on this queue and returns its result to an async caller without blocking
    /// a thread of Swift's pool: how the fetcher's and the transfers' owners are reached from tasks.
    func perform<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            async { continuation.resume(returning: body()) }
        }
    }
}

import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers POSIX signals as ordinary callbacks on a queue.
///
/// The signal is ignored at the process level and picked up by a Dispatch
/// signal source, so no work ever runs in an async-signal context.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Calls `handler` on the watcher's queue each time `signal` arrives.
    func watch(_ signalNumber: Int32, _ handler: @escaping @Sendable () -> Void) {
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
        source.setEventHandler(handler: handler)
        source.activate()
        sources.append(source)
    }
}

import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Delivers POSIX signals as ordinary callbacks on a queue, in the order they were handled.
///
/// The signal handler does one async-signal-safe thing: it writes the signal's
/// number into a pipe (the self-pipe trick). A Dispatch read source drains the
/// pipe on ``queue`` and calls the handlers, so no work runs in a signal context
/// and a burst such as USR1 USR2 USR1 is seen in that order, not coalesced per
/// signal as separate Dispatch signal sources would be.
///
/// The handlers are installed with `sigaction`, every watched signal in `sa_mask`:
/// while one handler runs, the others wait. With `signal()` they did not, and two
/// signals pending at once (the kernel takes the lower number, USR1, first) had the
/// second handler stacked on top of the first: it wrote its byte first, so a pending
/// USR1+USR2 pair was seen as USR2 then USR1 and a burst ending in USR2 ended in the
/// background. Masked, a pending pair is always handled USR1 then USR2.
///
/// The handlers and the read source are behind a lock: set up by ``watch(_:_:)`` and
/// ``start()`` (which hands the handlers to the read source by value); from then on only the
/// read source, on ``queue``, runs them.
package final class SignalWatcher: Sendable {
    private struct Setup {
        var handlers: [Int32: @Sendable () -> Void] = [:]
        var source: (any DispatchSourceRead)?
    }

    private let queue: DispatchQueue
    private let setup = Mutex(Setup())

    package init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Calls `handler` on the watcher's queue each time `signal` arrives.
    /// Call before ``start()``.
    package func watch(_ signalNumber: Int32, _ handler: @escaping @Sendable () -> Void) {
        setup.withLock { $0.handlers[signalNumber] = handler }
    }

    /// Installs the handlers and starts delivering.
    package func start() {
        let readEnd = SignalPipe.open()
        let queue = queue
        let handlers = setup.withLock { setup in
            let handlers = setup.handlers
            let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: queue)
            source.setEventHandler {
                var bytes = [UInt8](repeating: 0, count: 64)
                while true {
                    let count = read(readEnd, &bytes, bytes.count)
                    guard count > 0 else { break }
                    for byte in bytes[0..<count] { handlers[Int32(byte)]?() }
                }
            }
            source.activate()
            setup.source = source
            return handlers
        }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = forwardSignal
        sigemptyset(&action.sa_mask)
        for signalNumber in handlers.keys { sigaddset(&action.sa_mask, signalNumber) }
        // A system call the handler interrupts is restarted rather than failing with EINTR. (The
        // handler runs on the main thread: libdispatch's workers, and the threads they start,
        // block USR1 and USR2.)
        action.sa_flags = SA_RESTART
        for signalNumber in handlers.keys {
            guard sigaction(signalNumber, &action, nil) == 0 else {
                fatalError("cannot handle signal \(signalNumber): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// The pipe between the signal handler and the watcher's read source.
private enum SignalPipe {
    /// Creates the pipe once (both ends non-blocking, close-on-exec); returns the read end.
    static func open() -> Int32 {
        if signalPipeWriteEnd.load(ordering: .acquiring) < 0 {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { fatalError("cannot create the signal pipe: errno \(errno)") }
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
            signalPipeReadEnd.store(ends[0], ordering: .releasing)
            signalPipeWriteEnd.store(ends[1], ordering: .releasing)
        }
        return signalPipeReadEnd.load(ordering: .acquiring)
    }
}

// Set once in `SignalPipe.open()`, before any handler is installed; atomics, because the
// signal handler reads the write end (a lock-free load is async-signal-safe, a lock is not).
private let signalPipeReadEnd = Atomic<Int32>(-1)
private let signalPipeWriteEnd = Atomic<Int32>(-1)

/// The signal handler: records the signal's number in the pipe, keeping `errno`.
private func forwardSignal(_ signalNumber: Int32) {
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(signalPipeWriteEnd.load(ordering: .relaxed), &byte, 1)
    errno = savedErrno
}

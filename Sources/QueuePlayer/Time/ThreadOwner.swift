import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one thread allowed to touch some state, checked in debug builds: the thread that
/// ``claim()``s it owns it, and ``check()`` asserts that its caller is that thread. A release
/// build does nothing (the render thread's path stays as it is).
struct ThreadOwner: ~Copyable, Sendable {
    private let owner = Atomic<UInt>(0)

    init() {}

    /// The calling thread owns the state from now on.
    func claim() {
        #if DEBUG
        owner.store(UInt(pthread_self()), ordering: .relaxed)
        #endif
    }

    /// Asserts, in a debug build, that the calling thread owns the state (once it is claimed).
    func check(_ what: @autoclosure () -> String = "state", file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        let claimed = owner.load(ordering: .relaxed)
        assert(claimed == 0 || claimed == UInt(pthread_self()), "\(what()) touched off its owning thread", file: file, line: line)
        #endif
    }
}

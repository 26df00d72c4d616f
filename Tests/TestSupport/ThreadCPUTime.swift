import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The CPU time the calling thread has used, in seconds: what a growth test compares, since
/// another process taking the core stops this clock where it would stretch a wall-clock reading.
public enum ThreadCPUTime {
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The thread's CPU time spent in `body`.
    public static func of(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return now() - start
    }
}

#if canImport(Glibc)
import Glibc
#endif
#if canImport(CDispatch)
// For Glibc's `timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// CLOCK_MONOTONIC in seconds: the failed passwords' delays (``AccessPolicy``), the control
/// server's client limit and accept back-off.
package func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

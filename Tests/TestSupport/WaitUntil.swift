#if canImport(Glibc)
import Glibc
#endif

/// True once `condition` holds, polled every 10 ms up to `timeout` seconds: how a test waits
/// for an outcome (never a fixed sleep).
public func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = ChildProcess.now() + timeout
    while !condition() {
        if ChildProcess.now() > deadline { return false }
        usleep(10_000)
    }
    return true
}

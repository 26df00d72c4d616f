import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A well-behaved client that measures `status` round trips on a thread of its own while a
/// test does something hostile to the daemon on another.
///
/// It sends `status` and reads the reply to its `OK`, over and over, pausing `interval`
/// seconds between round trips (a sampling rate, so that the probe does not itself load the
/// machine), until ``finish()``.
public final class StatusProbe: Sendable {
    /// What the probe saw.
    public struct Result: CustomStringConvertible {
        /// Round-trip times in seconds, in order.
        public let seconds: [Double]
        /// Replies that were not a complete `status` reply, and errors.
        public let failures: [String]

        /// The `fraction` quantile (nearest rank), or infinity without samples.
        public func quantile(_ fraction: Double) -> Double {
            guard !seconds.isEmpty else { return .infinity }
            let sorted = seconds.sorted()
            return sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count)).rounded(.up)) - 1)]
        }

        public var median: Double { quantile(0.5) }
        public var p95: Double { quantile(0.95) }
        public var worst: Double { seconds.max() ?? .infinity }

        public var description: String {
            String(format: "%d status round trips: median %.1f ms, p95 %.1f ms, max %.1f ms",
                   seconds.count, median * 1000, p95 * 1000, worst * 1000)
                + (failures.isEmpty ? "" : "; failures: \(failures.prefix(3))")
        }
    }

    private let samples = Mutex<[Double]>([])
    private let failures = Mutex<[String]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts probing the control socket at `socket`.
    public init(socket: String, interval: Double = 0.005) throws {
        // Used by the probe's thread only, from here on.
        nonisolated(unsafe) let client = try greetedClient(socket)
        let thread = Thread { [self] in
            defer { finished.signal() }
            while !stopRequested.load(ordering: .relaxed) {
                let start = ChildProcess.now()
                do {
                    let reply = try client.request("status", timeout: 10)
                    let elapsed = ChildProcess.now() - start
                    if reply.last == "OK" && reply.contains(where: { $0.hasPrefix("state: ") }) {
                        samples.withLock { $0.append(elapsed) }
                    } else {
                        failures.withLock { $0.append("reply \(reply)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
                var none = pollfd()
                _ = poll(&none, 0, Int32(interval * 1000))
            }
        }
        thread.start()
    }

    /// The number of round trips so far.
    public var count: Int { samples.withLock { $0.count } }

    /// Stops the probe after its current round trip and returns what it measured.
    public func finish() -> Result {
        stopRequested.store(true, ordering: .relaxed)
        finished.wait()
        return Result(seconds: samples.withLock { $0 }, failures: failures.withLock { $0 })
    }

    /// Waits until the probe has made `count` more round trips (or `timeout` passed).
    public func waitForRoundTrips(_ count: Int, timeout: Double) -> Bool {
        let target = self.count + count
        let deadline = ChildProcess.now() + timeout
        while self.count < target {
            if ChildProcess.now() > deadline { return false }
            var none = pollfd()
            _ = poll(&none, 0, 5)
        }
        return true
    }
}

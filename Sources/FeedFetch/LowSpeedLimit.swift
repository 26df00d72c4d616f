import Synchronization

/// curl's `--speed-limit` and `--speed-time`: an attempt that brings fewer than
/// ``bytesPerSecond`` on average over the last ``seconds`` is cut, to be tried again later
/// with back-off. The read timeout alone starts again with every byte, so a server sending a
/// byte every two seconds held a download slot for ever (and two such enclosures stopped
/// every feed's downloads); the window counts from the request, the wait for the headers too.
public struct LowSpeedLimit: Sendable, Equatable {
    public var bytesPerSecond: Int64
    public var seconds: Double

    /// 1 KiB/s over 30 s, by default (curl's figures for a transfer that has stalled).
    public init(bytesPerSecond: Int64 = 1024, seconds: Double = 30) {
        self.bytesPerSecond = bytesPerSecond
        self.seconds = seconds
    }

    /// How often the meter looks: a tenth of the window, so a cut comes at most that late.
    var step: Duration { .milliseconds(Int64((seconds * 100).rounded(.up)).clamped(to: 10...3_000)) }

    /// The bytes one attempt has received, counted by its body loop and read by its watch
    /// (``watch()``), which runs beside it in the attempt's task group: the count is an atomic
    /// shared by the two tasks, the samples are the watch's own.
    final class Meter: Sendable {
        let limit: LowSpeedLimit
        private let received = Atomic<Int64>(0)

        init(_ limit: LowSpeedLimit) {
            self.limit = limit
        }

        func count(_ bytes: Int) {
            received.add(Int64(bytes), ordering: .relaxed)
        }

        /// Returns the reason to cut the attempt once it is too slow; nil when it is cancelled
        /// first (the attempt ended, or the transfers stop).
        func watch() async -> String? {
            let clock = ContinuousClock()
            let window = Duration.milliseconds(Int64(limit.seconds * 1000))
            let wanted = Double(limit.bytesPerSecond) * limit.seconds
            // (time, bytes so far), oldest first; the first one at the request.
            var samples: [(time: ContinuousClock.Instant, bytes: Int64)] = [(clock.now, 0)]
            while true {
                do {
                    try await Task.sleep(for: limit.step, clock: clock)
                } catch {
                    return nil
                }
                let now = clock.now, bytes = received.load(ordering: .relaxed)
                samples.append((now, bytes))
                // Keep one sample at or before the window's start: the window is whole.
                while samples.count > 2, now - samples[1].time >= window { samples.removeFirst() }
                guard let oldest = samples.first, now - oldest.time >= window else { continue }
                let elapsed = Double((now - oldest.time).components.seconds) + Double((now - oldest.time).components.attoseconds) / 1e18
                if Double(bytes - oldest.bytes) < wanted * elapsed / limit.seconds {
                    return "slower than \(limit.bytesPerSecond) bytes/s over \(Self.format(limit.seconds)) s "
                        + "(\(bytes - oldest.bytes) bytes in the last \(Self.format(elapsed)) s)"
                }
            }
        }

        private static func format(_ seconds: Double) -> String {
            seconds == seconds.rounded() ? String(Int(seconds)) : String(Double((seconds * 10).rounded()) / 10)
        }
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}

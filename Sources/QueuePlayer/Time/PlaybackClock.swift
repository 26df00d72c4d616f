import Dispatch

/// The time source a player and its sink agree on: a monotonic clock in
/// nanoseconds, and timers that fire against it.
///
/// Real playback uses ``RealTimeClock``; tests use ``VirtualClock`` so a
/// three-minute queue is played in milliseconds with exact sample accounting.
public protocol PlaybackClock: AnyObject, Sendable {
    /// Monotonic time in nanoseconds.
    func now() -> UInt64

    /// Runs `work` on `queue` once `deadline` (nanoseconds, this clock) is reached.
    func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork

    /// Blocks the calling thread for `nanoseconds` of this clock's time.
    ///
    /// Only a real-time clock sleeps; a virtual clock returns at once (its
    /// waiting is done by whoever advances it).
    func sleep(nanoseconds: UInt64)
}

/// A pending timer of a ``PlaybackClock``.
public protocol ScheduledWork: Sendable {
    /// Cancels the timer if it has not fired yet. Safe to call more than once.
    func cancel()
}

/// The host's monotonic clock (the one Dispatch timers use), with Dispatch timers.
public final class RealTimeClock: PlaybackClock {
    /// The one real clock; it has no state of its own.
    public static let shared = RealTimeClock()

    public init() {}

    public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    public func schedule(at deadline: UInt64, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .nanoseconds(0))
        timer.setEventHandler {
            timer.cancel()
            work()
        }
        timer.activate()
        return DispatchTimerWork(timer: timer)
    }

    public func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 { request = remaining }
    }
}

private struct DispatchTimerWork: ScheduledWork, @unchecked Sendable {
    // DispatchSourceTimer is thread-safe; it only lacks the Sendable annotation.
    let timer: any DispatchSourceTimer
    func cancel() { timer.cancel() }
}

#if canImport(Glibc)
import Glibc
#endif

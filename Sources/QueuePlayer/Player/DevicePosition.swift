import Synchronization

/// The stream's position as the player reads it: the render thread's latest measurement
/// (``StreamPosition``) brought forward by the device's own count (``AudioSink/playedFrames()``),
/// which is asked when the freshest of the two is a device period old (``AudioSink/positionPeriod``),
/// or half a period for a reader that must see a stall (a time observer's tick); in between, the
/// audible frame is interpolated from the freshest at the sample rate
/// (``StreamPosition/Snapshot/audibleFrame(at:)``). This is how iOS's audio clock works: it
/// hands out a sample time with the host time it was taken at, and the player's time is
/// interpolated from the last one, instead of the device being asked at each observer call.
/// While the device plays, the render thread measures after each write, so most ticks find a
/// base fresh enough and ask nothing (behind the pulse plugin, about one tick in ten asks):
/// the device is asked when the render thread has not measured for that
/// long, as when it waits for room a device that stands still does not make.
///
/// Why half a period for a tick, not the period: only the device's answer shows a device that
/// stands still (a suspended sound server) while the render thread waits for room, and the
/// reported time never runs backwards, so whatever it ran on through a stall before the device
/// was asked is off for the whole stall. Asked once per period, a 10 ms observer ran up to a
/// period ahead before the stall showed, more than the stall test allows; asked every half
/// period, it stays within the half period and mostly within a fraction of a millisecond.
/// Asking every half observer interval (once a tick for a 10 ms observer) would keep the worst
/// case to a tick, for a large share of the tick's CPU. `status` and other reads between ticks
/// do not ask (bench/results/history.md keeps the figures).
///
/// A measurement that jumps replaces the base of the interpolation at once: a new generation
/// (a load, a seek), or a stream the device started afresh (an underrun recovered, a device
/// opened again or changed: a new stream number) makes the render thread's measurement the
/// base, and a device answer is only carried forward within the stream it was taken in and
/// when it is later than that measurement (``StreamPosition/Snapshot/updated(with:)``).
///
/// Thread-safe: the last answer is under a mutex held only to copy it; the device is asked
/// outside it. The player's wake-ups read it (on the control queue, or on the clock thread for
/// a tick alone: ``TickShare``); other threads (the daemon's `status`) read without asking the
/// device (``read(asking:clock:)``).
final class DevicePosition: Sendable {
    private let position: StreamPosition
    private let sink: any AudioSink
    /// The device's latest answer: used while it cannot answer (the render thread is writing
    /// to it) and between the asks, as long as it is fresher than the render thread's measurement.
    /// (Falling back to the measurement alone when the device could not answer, the time ran
    /// ahead for a tick, 22 ms in one loaded run of the stall test, and held there until the
    /// device caught up.)
    private let lastAnswer = Mutex<PlayedFrames?>(nil)
    private let askCount = Atomic<Int>(0)

    init(position: StreamPosition, sink: any AudioSink) {
        self.position = position
        self.sink = sink
    }

    /// How many times the device has been asked (``AudioSink/playedFrames()``).
    var asks: Int { askCount.load(ordering: .relaxed) }

    /// How old the freshest measurement may be before the device is asked, by what the reader needs.
    enum Asking {
        /// A device period: a reader that only needs the time near.
        case oncePerPeriod
        /// Half a period: a time observer's tick, which must see a device that stands still
        /// before its time runs far ahead (``QueuePlayer``'s `readPosition()`).
        case everyHalfPeriod
        /// Never asked: a reader that must not wait for the device (`status` from another thread).
        case never
    }

    /// The stream's position, and the time of `clock` (the sink's) read after the measurement
    /// it is interpolated from. The device is asked, as `asking` allows, when the freshest
    /// measurement of its stream (the render thread's, or the device's last answer) is that old.
    func read(asking: Asking = .oncePerPeriod, clock: any PlaybackClock) -> (snapshot: StreamPosition.Snapshot, now: UInt64) {
        let snapshot = position.read()
        guard snapshot.isRunning, let measured = snapshot.played else { return (snapshot, clock.now()) }
        var answer = lastAnswer.withLock { $0 }
        // The base the position would be interpolated from: the render thread's measurement,
        // or the device's later answer in the same stream.
        var base = snapshot.measuredAt
        if let answer, answer.stream == measured.stream, answer.measuredAt > base { base = answer.measuredAt }
        let time = clock.now()
        let age: UInt64? = switch asking {
        case .oncePerPeriod: sink.positionPeriod
        case .everyHalfPeriod: sink.positionPeriod / 2
        case .never: nil
        }
        if let age, time &- base >= age || time < base {
            askCount.add(1, ordering: .relaxed)
            if let played = sink.playedFrames() {
                answer = played
                lastAnswer.withLock { kept in
                    // Two readers may have asked at once: the later answer stays.
                    if kept == nil || kept!.stream != played.stream || kept!.measuredAt < played.measuredAt { kept = played }
                }
                return (snapshot.updated(with: played), clock.now())
            }
        }
        guard let answer else { return (snapshot, time) }
        return (snapshot.updated(with: answer), time)
    }
}

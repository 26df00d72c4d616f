import Synchronization

/// The stream's position as the player reads it: the render thread's latest measurement
/// (``StreamPosition``) brought forward by the device's own count (``AudioSink/playedFrames()``),
/// which is asked at most once per device period (``AudioSink/positionPeriod``) unless a
/// time observer needs the time closer than that; in between, the audible frame is interpolated from the freshest of the two at the sample rate
/// (``StreamPosition/Snapshot/audibleFrame(at:)``). This is how iOS's audio clock works: it
/// hands out a sample time with the host time it was taken at, and the player's time is
/// interpolated from the last one, instead of the device being asked at each observer call.
///
/// Why an observer may shorten the period: only the device's answer shows a device that stands
/// still (a suspended sound server) while the render thread waits for room, and the reported
/// time never runs backwards, so whatever it ran on through a stall before the device was
/// asked is off for the whole stall. Asked once per period (166 ms behind ALSA's pulse
/// plugin), the stall test's 10 ms observer was off by 15 ms (median of the 30 reports from
/// the stall's start; 165 ms at most); asked every half observer interval it is off by less
/// than a millisecond. `status` and other reads between ticks do not ask.
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
/// device (``read(accuracy:now:)``).
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

    /// The stream's position, and the time of `clock` (the sink's) read after the measurement
    /// it is interpolated from. The device is asked when the freshest measurement of its stream is
    /// a device period old, or `accuracy` nanoseconds if that is shorter (a time observer
    /// whose ticks must follow a stall, see ``QueuePlayer``'s `readPosition()`); nil: the device
    /// is not asked (a reader that must not wait for it).
    func read(accuracy: UInt64? = .max, clock: any PlaybackClock) -> (snapshot: StreamPosition.Snapshot, now: UInt64) {
        let snapshot = position.read()
        guard snapshot.isRunning, let measured = snapshot.played else { return (snapshot, clock.now()) }
        var answer = lastAnswer.withLock { $0 }
        // The base the position would be interpolated from: the render thread's measurement,
        // or the device's later answer in the same stream.
        var base = snapshot.measuredAt
        if let answer, answer.stream == measured.stream, answer.measuredAt > base { base = answer.measuredAt }
        let time = clock.now()
        if let accuracy, time &- base >= min(accuracy, sink.positionPeriod) || time < base {
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

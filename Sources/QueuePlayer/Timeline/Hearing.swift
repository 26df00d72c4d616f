/// When frames of a running stream will be heard, from one measurement of it: the rules of a
/// playing player's next wake-up, shared by ``Timeline/nextWakeUp(of:in:at:nextDue:)`` (the
/// control queue) and the player's tick on the clock thread (from an ``AudibleSpan``).
struct Hearing {
    let snapshot: StreamPosition.Snapshot
    let now: UInt64
    /// The stream frame audible when the measurement was taken.
    let audibleAtMeasurement: Int64
    /// The device stands still: measured again, later, at the same frame as `last` (a stall the
    /// device's own count shows between the render thread's writes).
    let standsStill: Bool

    /// `snapshot` must be running, with a sample rate; `last` is the measurement the last
    /// wake-up was worked out from, in the same stream.
    init(snapshot: StreamPosition.Snapshot, now: UInt64, last: (audible: Int64, at: UInt64)?) {
        self.snapshot = snapshot
        self.now = now
        let audible = snapshot.framesWritten - snapshot.delay
        audibleAtMeasurement = audible
        standsStill = last.map { snapshot.measuredAt > $0.at && audible == $0.audible } ?? false
    }

    /// The clock's time at which `streamFrame` is heard. A device that stands still is looked
    /// at once a tick: the time of the next frame due, worked out as if it played, stays a
    /// fraction of a tick away while it stands still, and looked at then, the player woke every
    /// half millisecond through a stall (the stall test: 345 to about 1,100 device queries in 0.6 s).
    func when(_ streamFrame: Double) -> UInt64 {
        let nanoseconds = max(0, (streamFrame - Double(audibleAtMeasurement)) * 1e9 / Double(snapshot.sampleRate))
        let at = snapshot.measuredAt + UInt64(TickRounding.up(nanoseconds))
        // A frame not yet written is heard only after the render thread writes it: if its
        // extrapolated time has passed, the stream is starved (a write blocked, a device
        // stalled) and the time is unknown. Look again shortly rather than at once, which
        // would fire the same wake-up over and over, a core's worth, while it stands still.
        if streamFrame > Double(snapshot.framesWritten) {
            return max(at, now + (snapshot.framesWritten == 0 ? Timeline.positionPollInterval : Timeline.starvedPollInterval))
        }
        return standsStill ? max(at, now + Timeline.starvedPollInterval) : at
    }

    /// The wake-up while an item is heard (stream frames `start` to `end`, its own frame
    /// `itemStartFrame` at `start`, at `sampleRate`, `rate` item frames per stream frame; its
    /// audible time `seconds`): its end, or
    /// the item time of the earliest observer call (`nextDue`), whichever is first, and at the
    /// latest ``Timeline/longestSleep`` from now.
    func wakeUp(start: Int64, end: Int64?, itemStartFrame: Int64, sampleRate: Int, rate: Double, seconds: Double?,
                nextDue: (Double) -> Double?) -> UInt64 {
        var deadline = now + Timeline.longestSleep
        if let end { deadline = min(deadline, when(Double(end))) }
        // The stream frame of the earliest call due: the clock's time for it follows.
        if let seconds, let next = nextDue(seconds) {
            let frame = Double(start) + (next * Double(sampleRate) - Double(itemStartFrame)) / rate
            deadline = min(deadline, when(frame))
        }
        return deadline
    }
}

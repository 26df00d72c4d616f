import Foundation

/// An output that consumes audio at the sample rate and discards it.
///
/// With ``RealTimeClock`` it paces a player exactly like a device would (the
/// daemon's fallback when no ALSA device opens). With a clock that moves only when told
/// (a test's virtual clock, which takes it as a time listener) it consumes only when the
/// test advances the clock, so playback is deterministic and as fast as decoding. It
/// keeps exact counts of what was written and played.
///
/// Owner: `condition` (an `NSCondition`) guards every stored `var`; `listener` is set once,
/// in `init`.
public final class NullAudioSink: AudioSink, @unchecked Sendable {
    // Every stored var below is guarded by `condition`.
    private let condition = NSCondition()
    private var format: AudioFormat?
    private var written: Int64 = 0
    private var consumedAtAnchor: Int64 = 0
    private var anchorTime: UInt64 = 0
    private var running = true
    private var closed = true
    private var waitingForTime = false
    private var interrupted = false
    private var playedBeforeReconfigure: Int64 = 0
    private var writtenBeforeReconfigure: Int64 = 0
    private var formats: [AudioFormat] = []
    private var delayBias = 0

    public let clock: any PlaybackClock
    public let name = "null"
    /// How much audio the simulated device buffers.
    public let bufferDuration: Double

    /// How many frames must have played before a write waiting for room looks again
    /// (nil: a quarter of the buffer).
    public let wakeFrames: Int?

    /// Creates a null sink consuming against `clock` with a buffer of `bufferDuration` seconds;
    /// a write waiting for room wakes every `wakeFrames` frames played (a quarter of the buffer
    /// if nil).
    public init(clock: any PlaybackClock = RealTimeClock.shared, bufferDuration: Double = 0.1, wakeFrames: Int? = nil) {
        self.clock = clock
        self.bufferDuration = bufferDuration
        self.wakeFrames = wakeFrames
        listener = clock.addTimeListener { [weak self] in self?.timeMoved() }
    }

    /// The clock's listener, when the clock moves only when told: then waiting for time is
    /// waiting for the listener's call, not for the host's clock. Set once, in `init`.
    private var listener: (any ClockRegistration)?
    private var timeMovesOnlyWhenTold: Bool { listener != nil }

    /// Virtual clock: wakes the writer. It counts as busy from this moment, not
    /// from when it gets the lock back, so the clock waits for it to refill.
    private func timeMoved() {
        condition.lock()
        waitingForTime = false
        condition.broadcast()
        condition.unlock()
    }

    deinit {
        listener?.remove()
    }

    /// Every frame ever accepted by ``write(_:frameCount:)``, across reconfigurations.
    public var framesWritten: Int64 { locked { writtenBeforeReconfigure + written } }

    /// True between ``configure(_:)`` and ``close()``: the "device" is held.
    public var isOpen: Bool { locked { format != nil && !closed } }

    /// Every frame that has played out (written and consumed by the clock).
    public var framesPlayed: Int64 { locked { playedBeforeReconfigure + consumed(at: clock.now()) } }

    /// Frames added to every ``delay()`` report from now on (negative: fewer than are
    /// buffered), to model a device whose latency estimate steps, as real ones do
    /// (ALSA's pulse plugin, for one). What plays is unchanged.
    var reportedDelayBias: Int {
        get { locked { delayBias } }
        set { locked { delayBias = newValue } }
    }

    /// The formats the sink was configured with, in order (one entry per reconfiguration).
    public var configuredFormats: [AudioFormat] { locked { formats } }

    /// True while the writer is blocked until the virtual clock moves.
    public var isWaitingForTime: Bool { locked { waitingForTime } }

    /// Closes the sink: a writer waiting for a clock that will not move again is released
    /// (its write throws, a drain ends).
    public func stopWaitingForTime() {
        close()
    }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        locked {
            if self.format != format || closed {
                let now = clock.now()
                playedBeforeReconfigure += consumed(at: now)
                writtenBeforeReconfigure += written
                written = 0
                consumedAtAnchor = 0
                anchorTime = now
                self.format = format
                formats.append(format)
            }
            closed = false
            running = true
        }
    }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard let format, !closed else { throw AudioSinkError(sink: name, reason: "write to a closed sink") }
        let capacity = Int64(max(1, (bufferDuration * Double(format.sampleRate)).rounded()))
        while true {
            let now = clock.now()
            let consumedNow = consumed(at: now)
            if consumedNow == written {
                // Empty (or underrun): consumption restarts from the next frame written.
                consumedAtAnchor = written
                anchorTime = now
            }
            let space = capacity - (written - consumedNow)
            if space > 0 {
                let accepted = Int(min(space, Int64(frameCount)))
                written += Int64(accepted)
                return accepted
            }
            if interrupted {
                interrupted = false
                return 0
            }
            waitForTime(needFrames: wakeFrames ?? Int(capacity / 4), format: format)
            if closed { throw AudioSinkError(sink: name, reason: "closed while writing") }
        }
    }

    /// Takes every frame at once: the buffer runs over rather than anyone waiting, and drains
    /// at the sample rate as ever, so ``delay()`` still says how far ahead of the clock the
    /// stream is.
    public func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard format != nil, !closed else { throw AudioSinkError(sink: name, reason: "write to a closed sink") }
        let now = clock.now()
        if consumed(at: now) == written {
            consumedAtAnchor = written
            anchorTime = now
        }
        written += Int64(frameCount)
        return frameCount
    }

    /// Counts `frames` as written (and not yet played) from now on.
    public func joinStream(aheadBy frames: Int) {
        locked {
            guard format != nil, !closed, frames > 0 else { return }
            consumedAtAnchor = consumed(at: clock.now())
            anchorTime = clock.now()
            written += Int64(frames)
        }
    }

    public func interruptWrite() {
        locked {
            interrupted = true
            waitingForTime = false
            condition.broadcast()
        }
    }

    public func delay() -> Int {
        locked { max(0, Int(written - consumed(at: clock.now())) + delayBias) }
    }

    public func pause() -> Bool {
        locked {
            consumedAtAnchor = consumed(at: clock.now())
            running = false
        }
        return true
    }

    public func resume() {
        locked {
            anchorTime = clock.now()
            running = true
        }
    }

    public func flush() {
        locked {
            consumedAtAnchor = written
            anchorTime = clock.now()
            condition.broadcast()
        }
    }

    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if closed { return true }
        guard let format, running else { return written == consumedAtAnchor }
        if consumed(at: clock.now()) == written { return true }
        if interrupted {
            interrupted = false
            return false
        }
        if timeMovesOnlyWhenTold {
            waitForTime(needFrames: 0, format: format)
        } else {
            let remaining = Double(written - consumed(at: clock.now())) / Double(format.sampleRate)
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(remaining, Double(timeoutNanoseconds) / 1e9)))
        }
        return consumed(at: clock.now()) == written
    }

    public func close() {
        locked {
            let now = clock.now()
            if !closed {
                playedBeforeReconfigure += consumed(at: now)
                writtenBeforeReconfigure += written
            }
            written = 0
            consumedAtAnchor = 0
            closed = true
            condition.broadcast()
        }
    }

    // MARK: - Private (call with `condition` held)

    private func consumed(at now: UInt64) -> Int64 {
        guard running, let format, !closed else { return consumedAtAnchor }
        let elapsed = now >= anchorTime ? now - anchorTime : 0
        let frames = Int64((Double(elapsed) * Double(format.sampleRate) / 1e9).rounded(.down))
        return min(written, consumedAtAnchor + frames)
    }

    /// Blocks until the clock has moved (virtual) or until about `needFrames` can have played (real).
    private func waitForTime(needFrames: Int, format: AudioFormat) {
        if timeMovesOnlyWhenTold {
            waitingForTime = true
            while waitingForTime && !closed { condition.wait() }
        } else {
            let seconds = max(Double(needFrames) / Double(format.sampleRate), 0.002)
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}

/// The one seam between the engine and an audio output.
///
/// A sink is driven by the player's render thread alone: every method but ``close()``,
/// ``interruptWrite()``, ``playedFrames()``, ``isWaitingForTime`` and ``stopWaitingForTime()``
/// is called from that thread, and ``write(_:frameCount:)`` is the only call allowed to block
/// for long.
public protocol AudioSink: AnyObject, Sendable {
    /// A short name for logs, such as `alsa:default` or `null`.
    var name: String { get }

    /// The clock the sink consumes audio against; the player's observers use it too.
    var clock: any PlaybackClock { get }

    /// Opens the device for `format`, or reconfigures it if it is open with another format.
    func configure(_ format: AudioFormat) throws(AudioSinkError)

    /// Writes interleaved frames, blocking while the device buffer is full.
    /// Returns how many frames were accepted: 0 after ``interruptWrite()``, or when the sink
    /// wants its ``delay()`` asked again before it has room (a device not yet seen playing:
    /// ``ALSAAudioSink``). Either way the caller publishes the position and writes again.
    func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int

    /// Writes as a second output beside another that paces the stream (``MultiOutputSink``):
    /// takes what it can at once, dropping what does not fit, rather than waiting, so two
    /// clocks never take turns holding the render thread. Returns the frames taken off the
    /// stream (all of them, for a sink that drops).
    func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int

    /// Called right after ``configure(_:)`` when the sink joins a stream that is already
    /// playing, `frames` ahead of the clock (``MultiOutputSink`` enabling an output): a sink
    /// that keeps time by itself counts them as buffered, so its ``delay()``, and with it the
    /// position, matches the stream's if it paces from now on. A device with a clock of its
    /// own ignores it.
    func joinStream(aheadBy frames: Int)

    /// Makes a write that waits for buffer space return early, so the render
    /// thread can take a command. Called from the player's control queue.
    func interruptWrite()

    /// Frames written but not yet audible.
    func delay() -> Int

    /// How far the stream is ahead of the sink's clock, in frames: what its writes wait on.
    /// The same as ``delay()`` for a device, whose buffer is both; a FIFO's reader takes what
    /// is written at once, so its audible delay is what the pipe holds, while its pace runs
    /// ahead of the clock by a buffer of its own. An output switched on joins with this
    /// (``joinStream(aheadBy:)``), so the pace, and with it the position, carries on.
    func framesAheadOfClock() -> Int

    /// ``delay()``, with how far the device had played at that moment, for a sink that can
    /// also say so from other threads (``playedFrames()``); nil otherwise. Render thread.
    func measureDelay() -> (delay: Int, played: PlayedFrames?)

    /// How far the device has played, asked now from any thread (the player's clock
    /// thread, at its ticks), so a stall between the render thread's measurements shows at
    /// once; nil when the sink cannot tell from outside the render thread, or not now (the
    /// device not yet heard playing, a write or a restart of the stream under way).
    func playedFrames() -> PlayedFrames?

    /// How long an answer of ``playedFrames()`` stands for the device's position, in
    /// nanoseconds: the device's period while it is open. The player asks at most once in
    /// that long and interpolates in between (``DevicePosition``); 0, a sink without a period
    /// (the default): asked at every look.
    var positionPeriod: UInt64 { get }

    /// Stops consumption where it is; returns false if the device cannot pause
    /// in place, in which case its buffer has been dropped instead.
    func pause() -> Bool

    /// Resumes after a ``pause()`` that returned true.
    func resume()

    /// Drops everything buffered, at once.
    func flush()

    /// Whether ``flush()`` takes back what was written and not yet heard (a device's buffer):
    /// playback interrupted now stops where it is audible. False for an output whose reader
    /// has what was written as soon as it is written (a FIFO): what was written will be heard,
    /// and playback interrupted now stops at its end. Any thread.
    var flushTakesBackWrittenAudio: Bool { get }

    /// Waits at most `timeoutNanoseconds` for buffered audio to play out;
    /// returns true once nothing is left.
    func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool

    /// Closes the device; a later ``configure(_:)`` reopens it.
    func close()

    /// How many underruns (the device ran dry and was restarted) the sink has recovered
    /// from so far. Read by the render thread after each write, so it must be a plain load.
    var underruns: Int { get }

    /// True while a write or a drain waits for a clock that moves only when told (a test's)
    /// to move. Such a clock moves on only once the player is at rest, and the player's render
    /// thread is at rest inside the sink only while this holds. Any thread.
    var isWaitingForTime: Bool { get }

    /// The player goes away on a clock that moves only when told: nothing will move it again,
    /// so a write or a drain waiting for it must end now (with an error, or at once), or the
    /// render thread would never stop. Any thread.
    func stopWaitingForTime()
}

extension AudioSink {
    public func joinStream(aheadBy frames: Int) {}

    /// A device that cannot drop (ALSA) waits as usual: the stream is paced by the slower of the two.
    public func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        try write(samples, frameCount: frameCount)
    }

    /// A sink whose writes never wait for long (one that drops, or is not paced) needs no interruption.
    public func interruptWrite() {}

    public func measureDelay() -> (delay: Int, played: PlayedFrames?) { (delay(), nil) }

    public func framesAheadOfClock() -> Int { delay() }

    /// Most sinks answer on the render thread only: the player then carries the position
    /// forward from the render thread's measurements alone.
    public func playedFrames() -> PlayedFrames? { nil }

    public var positionPeriod: UInt64 { 0 }

    public var flushTakesBackWrittenAudio: Bool { true }

    /// A sink that cannot run dry has no underruns.
    public var underruns: Int { 0 }

    /// A sink that keeps no time of its own waits only for its device, never for a clock that
    /// moves when told: inside it, the render thread never holds such a clock back.
    public var isWaitingForTime: Bool { true }

    /// A sink that never waits for such a clock has nothing to end.
    public func stopWaitingForTime() {}
}

/// Why an output failed.
public struct AudioSinkError: Error, Sendable, CustomStringConvertible {
    /// The sink's name (device) the error is about.
    public var sink: String
    /// What failed, in words.
    public var reason: String

    public init(sink: String, reason: String) {
        self.sink = sink
        self.reason = reason
    }

    public var description: String { "\(sink): \(reason)" }
}

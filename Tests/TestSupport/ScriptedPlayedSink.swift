import QueuePlayer
import Synchronization

/// A sink that takes every frame at once and reports the delay and the count of what its
/// device has played that the test sets (``set(delay:played:)``): a device with a count of its
/// own (``AudioSink/playedFrames()``), for tests of what passes that count on.
///
/// Its state is under one `Mutex`, so the test may set it while another thread asks.
public final class ScriptedPlayedSink: AudioSink, Sendable {
    public let name: String
    public let clock: any PlaybackClock
    private let state = Mutex<(written: Int64, delay: Int, played: PlayedFrames?, open: Bool)>((0, 0, nil, false))

    /// The device's period (``AudioSink/positionPeriod``): 0, none, unless told.
    public let positionPeriod: UInt64

    public init(name: String, clock: any PlaybackClock, positionPeriod: UInt64 = 0) {
        self.name = name
        self.clock = clock
        self.positionPeriod = positionPeriod
    }

    /// What ``delay()``, ``measureDelay()`` and ``playedFrames()`` say from now on.
    public func set(delay: Int, played: PlayedFrames?) {
        state.withLock { $0.delay = delay; $0.played = played }
    }

    /// Frames written since it was made.
    public var framesWritten: Int64 { state.withLock { $0.written } }
    public var isOpen: Bool { state.withLock { $0.open } }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) { state.withLock { $0.open = true } }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        state.withLock { $0.written += Int64(frameCount) }
        return frameCount
    }

    public func delay() -> Int { state.withLock { $0.delay } }
    public func measureDelay() -> (delay: Int, played: PlayedFrames?) { state.withLock { ($0.delay, $0.played) } }
    /// What was set, open or closed: whether a closed output is asked is for the test to see.
    public func playedFrames() -> PlayedFrames? { state.withLock { $0.played } }
    public func pause() -> Bool { true }
    public func resume() {}
    public func flush() {}
    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool { true }
    public func close() { state.withLock { $0.open = false } }
    public var underruns: Int { 0 }
}

import QueuePlayer
import Synchronization

/// A ``NullAudioSink`` that cannot pause in place, as some ALSA devices cannot: its
/// ``pause()`` drops what is buffered and returns false. It remembers how many frames had
/// been heard when it dropped them, the position a reload must start from.
public final class DroppingPauseSink: AudioSink, Sendable {
    public let inner: NullAudioSink
    private let heardAtDrop = Mutex<Int64?>(nil)

    public init(wrapping inner: NullAudioSink) {
        self.inner = inner
    }

    /// The frames heard when the last ``pause()`` dropped the buffer; nil before any.
    public var framesHeardAtDrop: Int64? { heardAtDrop.withLock { $0 } }

    public var name: String { inner.name }
    public var clock: any PlaybackClock { inner.clock }
    public var underruns: Int { inner.underruns }
    public func configure(_ format: AudioFormat) throws(AudioSinkError) { try inner.configure(format) }
    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        try inner.write(samples, frameCount: frameCount)
    }
    public func interruptWrite() { inner.interruptWrite() }
    public func delay() -> Int { inner.delay() }

    /// Stops and drops the buffer; returns false (not paused in place).
    public func pause() -> Bool {
        _ = inner.pause()
        heardAtDrop.withLock { $0 = inner.framesPlayed }
        inner.flush()
        return false
    }

    public func resume() { inner.resume() }
    public func flush() { inner.flush() }
    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool { inner.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) }
    public func close() { inner.close() }
}

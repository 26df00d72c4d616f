import Foundation
import QueuePlayer
import Synchronization

/// A sink that passes everything to another sink (a ``NullAudioSink`` by default: paced by
/// a clock, no device) and keeps a copy of the PCM it accepted, in order: what a listener
/// would have heard, for byte-exact comparisons with a file decoded in one go.
///
/// Owner: the bytes `storage[0..<count]` are written by the render thread alone before it
/// stores `count` (release); readers load `count` (acquire) first. Recording allocates
/// nothing: the storage is made up front; bytes past it are not kept.
public final class CapturingSink: AudioSink, @unchecked Sendable {
    public let inner: any AudioSink
    private let storage: UnsafeMutableRawPointer
    private let capacity: Int
    private let count = Atomic<Int>(0)
    private let formatBytes = Atomic<Int>(0)

    /// Wraps `inner`, keeping at most `capacity` bytes.
    public init(wrapping inner: any AudioSink = NullAudioSink(), capacity: Int = 64 << 20) {
        self.inner = inner
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The PCM accepted so far.
    public var captured: Data { Data(bytes: storage, count: count.load(ordering: .acquiring)) }
    /// Frames accepted so far.
    public var capturedFrames: Int {
        let bytesPerFrame = formatBytes.load(ordering: .acquiring)
        return bytesPerFrame > 0 ? count.load(ordering: .acquiring) / bytesPerFrame : 0
    }

    public var name: String { "capture of \(inner.name)" }
    public var clock: any PlaybackClock { inner.clock }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        try inner.configure(format)
        formatBytes.store(format.bytesPerFrame, ordering: .releasing)
    }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        let accepted = try inner.write(samples, frameCount: frameCount)
        keep(samples, frames: accepted, of: frameCount)
        return accepted
    }

    public func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        let accepted = try inner.writeWithoutWaiting(samples, frameCount: frameCount)
        keep(samples, frames: accepted, of: frameCount)
        return accepted
    }

    private func keep(_ samples: UnsafeRawBufferPointer, frames: Int, of frameCount: Int) {
        guard frames > 0, frameCount > 0 else { return }
        let bytes = samples.count / frameCount * frames
        let start = count.load(ordering: .relaxed)
        let kept = min(bytes, capacity - start)
        guard kept > 0 else { return }
        (storage + start).copyMemory(from: samples.baseAddress!, byteCount: kept)
        count.store(start + kept, ordering: .releasing)
    }

    public func joinStream(aheadBy frames: Int) { inner.joinStream(aheadBy: frames) }
    public func interruptWrite() { inner.interruptWrite() }
    public func delay() -> Int { inner.delay() }
    public func measureDelay() -> (delay: Int, played: PlayedFrames?) { inner.measureDelay() }
    public func playedFrames() -> PlayedFrames? { inner.playedFrames() }
    public func pause() -> Bool { inner.pause() }
    public func resume() { inner.resume() }
    public func flush() { inner.flush() }
    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool { inner.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) }
    public func close() { inner.close() }
    public var underruns: Int { inner.underruns }
    public var isWaitingForTime: Bool { inner.isWaitingForTime }
    public func stopWaitingForTime() { inner.stopWaitingForTime() }
}

import AllocationCounter
import Foundation
import HTTPStreaming
import QueuePlayer
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Decoding a stream on the render thread allocates nothing once it plays (the real-time
/// path's rule): a sink that records the render thread's count of `malloc` calls
/// (``AllocationCounter``) at every write, under a virtual clock, so that the difference
/// between two writes is what the render thread allocated to decode and hand over one period,
/// reading the stream's buffer through libmpg123's feed. The stream's start (the first
/// frame's parse, the decoder's set-up) is left out: only the writes after the first seconds
/// of audio count. (That start does allocate on the render thread, about 18 `malloc` calls
/// at a file-to-stream handover, and so does a seek in an on-demand stream, about 22, where
/// a file's seek makes 2: known, not yet moved off the render thread.)
@Suite(.serialized) struct StreamRenderAllocationTests {
    @Test(arguments: [false, true])
    func steadyStreamDecodingAllocatesNothingOnTheRenderThread(icy: Bool) async throws {
        let server = icy
            ? try LiveStreamTests.radio(title: { _, block in "Title \(block)" })
            : try ScriptedHTTPServer { _, connection in
                connection.writeHead("200 OK", [("Content-Type", "audio/mpeg")])
                while connection.write(LiveStreamTests.audio) {}
            }
        defer { server.stop() }
        let clock = VirtualClock()
        let sink = AllocationRecordingSink(wrapping: NullAudioSink(clock: clock))
        let factory = HTTPStreamingDecoderFactory(configuration: StreamPlayback.quick)
        let item = PlayerItem(url: server.url("stream"))
        let player = QueuePlayer(items: [item], sink: sink, decoderFactory: factory)
        player.play()
        let deadline = ChildProcess.now() + 60
        while sink.recorded < AllocationRecordingSink.capacity && ChildProcess.now() < deadline {
            clock.advance(bySeconds: 0.05)
            usleep(1_000)
        }
        player.pause()
        player.close()
        try await factory.shutdown()

        // Consecutive writes on one thread with audio in them, after the first 3 s of it.
        let all = sink.writes
        let writes = all.drop { $0.framesBefore < 3 * 44_100 }
        let seconds = Double((all.last?.framesBefore ?? 0) - (writes.first?.framesBefore ?? 0)) / 44_100
        let perWrite = zip(writes, writes.dropFirst()).compactMap { previous, next in
            pthread_equal(previous.thread, next.thread) != 0 ? next.allocations - previous.allocations : nil
        }
        try #require(perWrite.count >= 200 && seconds >= 10, "only \(perWrite.count) writes in a row on the render thread, \(seconds) s")
        let allocating = perWrite.filter { $0 != 0 }
        print("stream\(icy ? " with ICY titles" : ""): \(allocating.count) of \(perWrite.count) render-thread writes over \(String(format: "%.1f", seconds)) s of audio allocated (\(allocating.prefix(20)))")
        #expect(allocating.count == 0, "\(allocating.count) of \(perWrite.count) writes allocated: \(allocating.prefix(20))")
    }

    /// The pace stage (the stretcher at 1.5x, skip silence on) allocates nothing per chunk
    /// either: Sonic's buffers are grown when the stretcher is made, before the chunk that needs it.
    @Test(arguments: [AudioTimePitchAlgorithm.timeDomain, .varispeed])
    func playingAtOnePointFiveAllocatesNothingOnTheRenderThread(algorithm: AudioTimePitchAlgorithm) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try TestMedia.makeTone(seconds: 40, in: directory, name: "forty")
        let clock = VirtualClock()
        let sink = AllocationRecordingSink(wrapping: NullAudioSink(clock: clock))
        let item = PlayerItem(url: url)
        item.audioTimePitchAlgorithm = algorithm
        let player = QueuePlayer(items: [item], sink: sink)
        player.skipsSilence = true
        player.rate = 1.5
        let deadline = ChildProcess.now() + 60
        while player.currentItem != nil && sink.recorded < AllocationRecordingSink.capacity && ChildProcess.now() < deadline {
            clock.advance(bySeconds: 0.05)
        }
        player.pause()
        player.close()
        let writes = sink.writes.drop { $0.framesBefore < 3 * 44_100 }
        let perWrite = zip(writes, writes.dropFirst()).compactMap { previous, next in
            pthread_equal(previous.thread, next.thread) != 0 ? next.allocations - previous.allocations : nil
        }
        try #require(perWrite.count >= 200, "only \(perWrite.count) writes in a row on the render thread")
        let allocating = perWrite.filter { $0 != 0 }
        #expect(allocating.count == 0, "\(allocating.count) of \(perWrite.count) writes allocated: \(allocating.prefix(20))")
    }
}

/// A sink that passes everything to another and, on the render thread, records at each write
/// the thread's count of `malloc` calls and the frames written before it, in memory made up
/// front (recording allocates nothing). Owner: `slots[0..<count]` are written by the render
/// thread alone before it stores `count` (release); readers load `count` (acquire) first.
final class AllocationRecordingSink: AudioSink, @unchecked Sendable {
    struct Write {
        var allocations: UInt64
        var thread: pthread_t
        var framesBefore: Int64
    }

    static let capacity = 20_000
    let inner: any AudioSink
    private let slots = UnsafeMutablePointer<Write>.allocate(capacity: capacity)
    private let count = Atomic<Int>(0)
    private let frames = Atomic<Int64>(0)

    init(wrapping inner: any AudioSink) { self.inner = inner }
    deinit { slots.deallocate() }

    var recorded: Int { count.load(ordering: .acquiring) }
    var writes: [Write] { Array(UnsafeBufferPointer(start: slots, count: recorded)) }

    var name: String { "allocation recording of \(inner.name)" }
    var clock: any PlaybackClock { inner.clock }

    func configure(_ format: AudioFormat) throws(AudioSinkError) { try inner.configure(format) }

    func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        record()
        let accepted = try inner.write(samples, frameCount: frameCount)
        frames.add(Int64(accepted), ordering: .relaxed)
        return accepted
    }

    func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        record()
        let accepted = try inner.writeWithoutWaiting(samples, frameCount: frameCount)
        frames.add(Int64(accepted), ordering: .relaxed)
        return accepted
    }

    private func record() {
        let index = count.load(ordering: .relaxed)
        guard index < Self.capacity else { return }
        slots[index] = Write(allocations: allocation_count_this_thread(), thread: pthread_self(),
                             framesBefore: frames.load(ordering: .relaxed))
        count.store(index + 1, ordering: .releasing)
    }

    func joinStream(aheadBy frames: Int) { inner.joinStream(aheadBy: frames) }
    func interruptWrite() { inner.interruptWrite() }
    func delay() -> Int { inner.delay() }
    func measureDelay() -> (delay: Int, played: PlayedFrames?) { inner.measureDelay() }
    func playedFrames() -> PlayedFrames? { inner.playedFrames() }
    func pause() -> Bool { inner.pause() }
    func resume() { inner.resume() }
    func flush() { inner.flush() }
    func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool { inner.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) }
    func close() { inner.close() }
    var underruns: Int { inner.underruns }
    var isWaitingForTime: Bool { inner.isWaitingForTime }
    func stopWaitingForTime() { inner.stopWaitingForTime() }
}

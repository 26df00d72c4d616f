import AllocationCounter
import Dispatch
import Foundation
import QueuePlayer
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A tick allocates nothing. With the real-time clock a 10 ms observer's tick runs
/// on the clock thread from end to end: the timer fires, the player works out what is due and
/// sets its timer again, and the block is called holding its queue. The block reads the clock
/// thread's count of `malloc` calls (``AllocationCounter``) at every tick, so the difference
/// between two ticks is what one tick allocated.
@Suite struct TickAllocationTests {
    /// What the block records, in memory allocated beforehand. Owned by the observer's queue:
    /// written by the block only, read once the observer is removed.
    final class TickLog: @unchecked Sendable {
        static let capacity = 300
        let counts = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        let threads = UnsafeMutablePointer<pthread_t>.allocate(capacity: capacity)
        var recorded = 0

        deinit {
            counts.deallocate()
            threads.deallocate()
        }

        func record() {
            guard recorded < Self.capacity else { return }
            counts[recorded] = allocation_count_this_thread()
            threads[recorded] = pthread_self()
            recorded += 1
        }
    }

    @Test func aTickOfTheRealTimeClockAllocatesNothing() throws {
        try Self.expectTicksAllocateNothing(sink: NullAudioSink())
    }

    /// The same through ALSA's pulse plugin, where a tick also asks the device how far it has
    /// played (``AudioSink/playedFrames()``: alsa-lib and libpulse, on the clock thread).
    @Test func aTickThatAsksTheDeviceAllocatesNothing() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        // Suites that use alsa-lib inside the test process set its configuration per test
        // (the tests run one at a time).
        setenv("ALSA_CONFIG_PATH", pulse.alsaConfigPath, 1)
        let sink = MeasuringSink(wrapping: ALSAAudioSink(device: "pulsenull"))
        try Self.expectTicksAllocateNothing(sink: sink)
        // The ticks did ask the device: a tick asks when the render thread has not measured for
        // half a device period (83 ms behind the pulse plugin), 27 times in 300 ticks in one run.
        #expect(sink.playedFramesAnswers >= 10, "the device answered the player's ticks \(sink.playedFramesAnswers) times")
    }

    /// Plays a tone to `sink` with a 10 ms observer and counts the `malloc` calls between ticks.
    static func expectTicksAllocateNothing(sink: any AudioSink) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 10, in: directory, name: "ten-seconds")
        let player = QueuePlayer(items: [PlayerItem(url: tone)], sink: sink)
        defer { player.close() }
        let log = TickLog()
        let queue = DispatchQueue(label: "TickAllocationTests.ticks")
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: queue) { _ in
            log.record()
        }
        player.play()
        _ = waitUntil(timeout: 20) { queue.sync { log.recorded } >= TickLog.capacity }
        player.removeTimeObserver(token)
        player.pause()

        // Consecutive calls on one thread (the clock thread; the extra call when playback
        // starts runs elsewhere): how many malloc calls lay between them.
        let perTick = queue.sync { () -> [UInt64] in
            (1..<log.recorded).compactMap { index in
                pthread_equal(log.threads[index], log.threads[index - 1]) != 0 ? log.counts[index] - log.counts[index - 1] : nil
            }
        }
        try #require(perTick.count >= 200, "only \(perTick.count) ticks in a row on the clock thread")
        // The clock thread is the process's: another test's real-time player may set a timer
        // on it now and then (and allocate), so most ticks, not all, must show none. One
        // allocation per tick would show in every one.
        let clean = perTick.filter { $0 == 0 }.count
        #expect(Double(clean) >= 0.9 * Double(perTick.count),
                "\(perTick.count - clean) of \(perTick.count) ticks allocated: \(perTick.filter { $0 != 0 }.prefix(20))")
    }
}

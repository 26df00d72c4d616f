@testable import QueuePlayer
import TestSupport
import Testing

/// ``DevicePosition``: the device asked at most once per period, the position interpolated in
/// between, and a measurement that jumps taking over at once. A virtual clock and a device
/// whose count the test sets: 1,000 frames a second, a 100 ms period.
@Suite struct DevicePositionTests {
    static let period: UInt64 = 100_000_000
    static let millisecond: UInt64 = 1_000_000

    /// A render thread's measurement at `at`: `written` frames written, `delay` of them not
    /// yet heard, the device's count being the stream's plus 100 (it counts from its opening).
    static func measurement(stream: UInt64 = 1, generation: UInt64 = 1, written: Int64, delay: Int64, at: UInt64) -> StreamPosition.Snapshot {
        StreamPosition.Snapshot(generation: generation, framesWritten: written, delay: delay, measuredAt: at, sampleRate: 1_000,
                                isRunning: true, played: PlayedFrames(stream: stream, frames: written - delay + 100, measuredAt: at))
    }

    struct Device {
        let clock = VirtualClock()
        let sink: ScriptedPlayedSink
        let stream = StreamPosition()
        let position: DevicePosition

        init() {
            sink = ScriptedPlayedSink(name: "device", clock: clock, positionPeriod: DevicePositionTests.period)
            position = DevicePosition(position: stream, sink: sink)
        }

        /// The device has played `heard` frames of the stream, in stream `number`, as of now.
        func plays(_ heard: Int64, stream number: UInt64 = 1) {
            sink.set(delay: 0, played: PlayedFrames(stream: number, frames: heard + 100, measuredAt: clock.now()))
        }

        /// Measured by the render thread with 4,500 frames heard, and the device asked then.
        static func heardAt4500() -> Device {
            let device = Device()
            device.stream.publish(DevicePositionTests.measurement(written: 5_000, delay: 500, at: device.clock.now()))
            device.plays(4_500)
            #expect(device.read() == 4_500)
            return device
        }

        func read(asking: DevicePosition.Asking = .oncePerPeriod) -> Double {
            let (snapshot, now) = position.read(asking: asking, clock: clock)
            return snapshot.audibleFrame(at: now)
        }
    }

    /// A device that plays at its rate, looked at every 10 ms for 2 s: asked once per period,
    /// and the interpolated position within a frame of the device's throughout.
    @Test func askedOncePerPeriodAndInterpolatedInBetween() {
        let device = Device()
        device.stream.publish(Self.measurement(written: 10_000, delay: 5_500, at: device.clock.now()))
        let start = device.clock.now()
        var worst = 0.0
        for _ in 0..<200 {
            device.clock.advance(byNanoseconds: 10 * Self.millisecond)
            let heard = 4_500 + Int64((device.clock.now() - start) / Self.millisecond)
            device.plays(heard)
            worst = max(worst, abs(device.read() - Double(heard)))
        }
        #expect(worst <= 1, "the interpolated position was \(worst) frames off the device's")
        #expect(device.position.asks == 20, "2 s at a 100 ms period: 20 asks, not \(device.position.asks)")
    }

    /// A reader that must follow a stall (a time observer's tick, every 10 ms here) asks every
    /// half period, not every call; one that finds the render thread's measurement fresher than
    /// that does not ask at all; a reader that must not wait for the device never asks.
    @Test func aTickAsksEveryHalfPeriodAFreshMeasurementNoneAndNoneNever() {
        let device = Device()
        device.stream.publish(Self.measurement(written: 10_000, delay: 5_500, at: device.clock.now()))
        var worst = 0.0
        for step in 1...100 {
            device.clock.advance(byNanoseconds: 10 * Self.millisecond)
            device.plays(4_500 + Int64(step * 10))
            worst = max(worst, abs(device.read(asking: .everyHalfPeriod) - Double(4_500 + step * 10)))
        }
        #expect(device.position.asks == 20, "1 s at a 100 ms period, asked every half period: 20 asks, not \(device.position.asks)")
        #expect(worst <= 1, "the interpolated position was \(worst) frames off the device's")
        // The render thread measures every 40 ms (as it does after each write while the device
        // plays): its measurement is never half a period old, and the device is not asked.
        for step in 1...100 {
            device.clock.advance(byNanoseconds: 10 * Self.millisecond)
            let heard = 5_500 + Int64(step * 10)
            device.plays(heard)
            if step % 4 == 0 {
                device.stream.publish(Self.measurement(written: heard + 500, delay: 500, at: device.clock.now()))
            }
            #expect(abs(device.read(asking: .everyHalfPeriod) - Double(heard)) <= 1)
        }
        #expect(device.position.asks == 20, "with a measurement at most 40 ms old, \(device.position.asks - 20) asks")
        for _ in 0..<50 {
            device.clock.advance(byNanoseconds: 10 * Self.millisecond)
            _ = device.read(asking: .never)
        }
        #expect(device.position.asks == 20)
    }

    /// The device stands still after it was asked: the position runs on from the answer until
    /// the next ask, at most a period, and then stands where the device says.
    @Test func aStallShowsAtTheNextAsk() {
        let device = Device.heardAt4500()
        // Stalled at 4,500 from here on; a period later the device is asked and says so.
        device.clock.advance(byNanoseconds: 50 * Self.millisecond)
        #expect(device.read() == 4_550, "between the asks, interpolated")
        device.clock.advance(byNanoseconds: 50 * Self.millisecond)
        device.plays(4_500)
        #expect(device.read() == 4_500, "asked a period after the last answer: it stands still")
    }

    /// A jump resets the interpolation at once, without waiting for the next ask: the render
    /// thread measured a stream the device started afresh (an underrun recovered: a new stream
    /// number), or a new generation (a seek). The last answer, of the old stream, is not
    /// carried into the new one.
    @Test func aJumpResetsTheInterpolation() {
        let device = Device.heardAt4500()
        device.clock.advance(byNanoseconds: 20 * Self.millisecond)
        // Underrun: the device ran dry at 5,000 and was restarted (stream 2) 20 ms later, with
        // 300 frames written since, none heard yet: 300 frames of delay.
        device.stream.publish(Self.measurement(stream: 2, written: 5_300, delay: 300, at: device.clock.now()))
        #expect(device.read() == 5_000, "the new stream's measurement, not the old stream's answer carried on (4,520)")
        device.clock.advance(byNanoseconds: 10 * Self.millisecond)
        #expect(device.read() == 5_010)
        // A seek: a new generation, counted from 0 again.
        device.clock.advance(byNanoseconds: 10 * Self.millisecond)
        device.stream.publish(Self.measurement(stream: 2, generation: 2, written: 1_000, delay: 1_000, at: device.clock.now()))
        #expect(device.read() == 0)
    }
}

import QueuePlayer
import Testing

@Suite struct SoftwareVolumeTests {
    @Test func fullVolumeLeavesEverySampleAsItIs() {
        var samples: [Int16] = [.min, -12_345, -1, 0, 1, 12_345, .max]
        let before = samples
        #expect(SoftwareVolume.gain(percent: 100) == SoftwareVolume.unity)
        #expect(SoftwareVolume.gain(percent: 150) == SoftwareVolume.unity, "clamped")
        samples.withUnsafeMutableBufferPointer { SoftwareVolume.apply(gain: SoftwareVolume.gain(percent: 100), to: $0) }
        #expect(samples == before)
    }

    @Test func zeroIsSilenceAndTheCurveRisesSteadily() {
        var samples: [Int16] = [.min, -12_345, 12_345, .max]
        #expect(SoftwareVolume.gain(percent: 0) == 0)
        #expect(SoftwareVolume.gain(percent: -5) == 0, "clamped")
        samples.withUnsafeMutableBufferPointer { SoftwareVolume.apply(gain: 0, to: $0) }
        #expect(samples == [0, 0, 0, 0])
        let gains = (0...100).map { SoftwareVolume.gain(percent: $0) }
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 <= $1 }, "never falls as the volume rises")
        // MPD's curve: 50 % is (e^2 - 1) / (e^4 - 1) of full scale, about 0.1192.
        #expect(abs(Double(SoftwareVolume.gain(percent: 50)) / 1024 - 0.1192) < 0.001)
    }

    @Test func scalingRoundsToNearestAndKeepsTheSign() {
        let gain = SoftwareVolume.gain(percent: 75)
        var samples: [Int16] = [1_000, -1_000, 3, -3, .max, .min]
        samples.withUnsafeMutableBufferPointer { SoftwareVolume.apply(gain: gain, to: $0) }
        let expected = [Int32(1_000), -1_000, 3, -3, Int32(Int16.max), Int32(Int16.min)].map {
            Int16((Double($0) * Double(gain) / 1024).rounded(.toNearestOrAwayFromZero))
        }
        for (got, want) in zip(samples, expected) { #expect(abs(Int(got) - Int(want)) <= 1, "\(got) vs \(want)") }
        #expect(samples[0] == -samples[1] || abs(Int(samples[0]) + Int(samples[1])) <= 1)
    }

    /// A fade (a sleep timer's) is a gain of its own multiplied into the volume's: unity leaves
    /// the other as it is, exactly, and two halves make a quarter.
    @Test func aFadeMultipliesIntoTheVolume() {
        let unity = SoftwareVolume.unity
        let half = SoftwareVolume.gain(linear: 0.5)
        #expect(SoftwareVolume.combine(unity, unity) == unity)
        #expect(SoftwareVolume.combine(half, unity) == half && SoftwareVolume.combine(unity, half) == half)
        #expect(SoftwareVolume.combine(half, half) == SoftwareVolume.gain(linear: 0.25))
        #expect(SoftwareVolume.combine(half, 0) == 0 && SoftwareVolume.combine(0, unity) == 0)
    }
}

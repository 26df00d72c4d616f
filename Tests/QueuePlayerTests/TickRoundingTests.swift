@testable import QueuePlayer
import Testing

/// The tick's rounding without libm gives the standard library's bits for every input: halves,
/// values just beside integers, signed zeros, the limit where doubles stop having fractions,
/// infinities, NaN, and a sweep of the times and frame counts a tick works with.
@Suite struct TickRoundingTests {
    static let special: [Double] = {
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                                1, -1, 1e-300, -1e-300, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
                                .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                4_503_599_627_370_496, -4_503_599_627_370_496, 9_007_199_254_740_992, 1e18, -1e18]
        for base in [1.0, 2, 3, 10, 1_000_000, 4_503_599_627_370_495, 4_503_599_627_370_495.5] {
            for value in [base, -base] {
                values += [value, value.nextUp, value.nextDown, value + 0.5, value - 0.5, (value + 0.5).nextUp, (value + 0.5).nextDown]
            }
        }
        return values
    }()

    static func sameBits(_ a: Double, _ b: Double) -> Bool {
        a.isNaN ? b.isNaN : a.bitPattern == b.bitPattern
    }

    static func check(_ x: Double) {
        #expect(sameBits(TickRounding.down(x), x.rounded(.down)), "down(\(x)): \(TickRounding.down(x)), not \(x.rounded(.down))")
        #expect(sameBits(TickRounding.up(x), x.rounded(.up)), "up(\(x)): \(TickRounding.up(x)), not \(x.rounded(.up))")
        #expect(sameBits(TickRounding.nearest(x), x.rounded()), "nearest(\(x)): \(TickRounding.nearest(x)), not \(x.rounded())")
    }

    @Test func theEdgesRoundAsTheStandardLibraryDoes() {
        for x in Self.special { Self.check(x) }
        Self.check(.nan)
    }

    @Test func aSweepOfTickValuesRoundsAsTheStandardLibraryDoes() {
        // Item times over an hour in 10 ms steps divided by intervals, nanoseconds of device
        // periods, frames at 44.1 kHz: values a tick rounds, and their neighbours.
        var generator = SystemRandomNumberGenerator()
        for step in 0..<360_000 {
            let seconds = Double(step) * 0.01
            Self.check(seconds / 0.01)
            Self.check(seconds * 1e9)
            Self.check(-seconds * 44_100)
            Self.check(Double.random(in: -1e7...1e7, using: &generator))
        }
    }
}

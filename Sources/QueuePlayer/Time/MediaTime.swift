/// A point or span on a media timeline, as a rational number of seconds.
///
/// The analogue of `CMTime`: `value / timescale` seconds. Audio positions are kept
/// in sample frames with the sample rate as timescale, so they stay exact; the
/// `seconds` view is for display and arithmetic across rates.
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numerator: a count of `1/timescale` second units.
    public var value: Int64
    /// Units per second. Always positive.
    public var timescale: Int32

    /// Creates a time of `value / timescale` seconds.
    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime needs a positive timescale")
        self.value = value
        self.timescale = timescale
    }

    /// Creates the time nearest to `seconds` in units of `1/preferredTimescale`.
    public init(seconds: Double, preferredTimescale: Int32 = 1_000_000_000) {
        // `rounded()` without libm's `round` (``TickRounding``): a tick makes one for each call.
        self.init(value: Int64(TickRounding.nearest(seconds * Double(preferredTimescale))), timescale: preferredTimescale)
    }

    /// Zero seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)

    /// The time in seconds.
    public var seconds: Double { Double(value) / Double(timescale) }

    /// This time expressed in another timescale, rounded to the nearest unit.
    public func convertScale(_ newTimescale: Int32) -> MediaTime {
        if newTimescale == timescale { return self }
        let scaled = (Double(value) * Double(newTimescale) / Double(timescale)).rounded()
        return MediaTime(value: Int64(scaled), timescale: newTimescale)
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        lhs.value.multipliedFullWidth(by: Int64(rhs.timescale)) == rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
    }

    public func hash(into hasher: inout Hasher) {
        // Equal times in different timescales must hash alike: hash the reduced fraction.
        let divisor = Self.gcd(Swift.abs(value), Int64(timescale))
        hasher.combine(value / Swift.max(divisor, 1))
        hasher.combine(Int64(timescale) / Swift.max(divisor, 1))
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        let l = lhs.value.multipliedFullWidth(by: Int64(rhs.timescale))
        let r = rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
        return l.high < r.high || (l.high == r.high && l.low < r.low)
    }

    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        if lhs.timescale == rhs.timescale { return MediaTime(value: lhs.value + rhs.value, timescale: lhs.timescale) }
        let scale = Swift.max(lhs.timescale, rhs.timescale)
        return MediaTime(value: lhs.convertScale(scale).value + rhs.convertScale(scale).value, timescale: scale)
    }

    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + MediaTime(value: -rhs.value, timescale: rhs.timescale)
    }

    public var description: String {
        "\(value)/\(timescale) (\(String(format: "%.6f", seconds)) s)"
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}

import Foundation

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One fix, as Core Location's `CLLocation`: where, how well, how fast and which way, and when.
///
/// As in Core Location, a negative accuracy, speed or course means "not known" (a 2D fix has
/// no altitude: its `verticalAccuracy` is -1).
public struct Location: Hashable, Sendable, Codable {
    /// How much of a position the receiver had (gpsd's TPV `mode`).
    public enum Fix: Int, Hashable, Sendable, Codable {
        /// Modes 0 and 1: no position at all.
        case none = 1
        /// Mode 2: latitude and longitude.
        case twoDimensional = 2
        /// Mode 3: with altitude.
        case threeDimensional = 3

        /// The name `location` reports (`mode: 3d`).
        public var name: String {
            switch self {
            case .none: "none"
            case .twoDimensional: "2d"
            case .threeDimensional: "3d"
            }
        }
    }

    public var coordinate: Coordinate
    /// Metres above mean sea level; meaningful only for a 3D fix (``verticalAccuracy`` may still be
    /// unknown: gpsd gives `epv` only when the receiver reports its errors).
    public var altitude: Double
    /// The radius of uncertainty of ``coordinate``, in metres; negative: unknown.
    public var horizontalAccuracy: Double
    /// The uncertainty of ``altitude``, in metres; negative: unknown (a 2D fix).
    public var verticalAccuracy: Double
    /// Metres per second over ground; negative: unknown.
    public var speed: Double
    /// Degrees clockwise from true north, 0 ..< 360; negative: unknown.
    public var course: Double
    /// When the receiver took the fix (its own clock: GPS time, UTC).
    public var timestamp: Date
    public var fix: Fix

    public init(coordinate: Coordinate, altitude: Double = 0, horizontalAccuracy: Double, verticalAccuracy: Double = -1,
                speed: Double = -1, course: Double = -1, timestamp: Date, fix: Fix = .twoDimensional) {
        self.coordinate = coordinate
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
        self.fix = fix
    }

    /// The great-circle distance between the two fixes' coordinates, in metres (`CLLocation.distance(from:)`).
    public func distance(from other: Location) -> Double {
        coordinate.distance(to: other.coordinate)
    }

    /// `CLLocation`'s description, the one an iOS app logs:
    /// `<+37.33482105,-122.03350886> +/- 5.00m (speed 15.90 mps / course 255.94) @ 2026-11-27T10:05:13Z`
    /// (8 decimals of degrees; metres, m/s and degrees with 2; the time in UTC, to the second).
    /// Independent of the locale: C's formatting, and the time from `gmtime_r`.
    public var formatted: String {
        "<\(Self.format("%+.8f", coordinate.latitude)),\(Self.format("%+.8f", coordinate.longitude))> "
            + "+/- \(Self.format("%.2f", horizontalAccuracy))m "
            + "(speed \(Self.format("%.2f", speed)) mps / course \(Self.format("%.2f", course))) @ \(Self.utc(timestamp))"
    }

    /// `2026-11-27T10:05:13Z`: the time in UTC, whole seconds (rounded down).
    public static func utc(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return format("%04d-%02d-%02dT%02d:%02d:%02dZ", Int32(parts.tm_year + 1900), Int32(parts.tm_mon + 1), parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    private static func format(_ pattern: String, _ arguments: any CVarArg...) -> String {
        String(format: pattern, locale: nil, arguments: arguments)
    }
}

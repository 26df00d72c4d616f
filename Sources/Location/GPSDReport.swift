#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One line of gpsd's JSON protocol, as the location source uses it: a `TPV` report (time,
/// position, velocity) becomes a ``Location`` or "no fix"; `VERSION` says a gpsd answered;
/// every other class is ignored; anything that is not a JSON object of that shape is
/// malformed (and dropped by the caller, with the reason in a debug log).
///
/// A TPV's `mode` 0 or 1 is no fix; 2 is a 2D fix; 3 a 3D fix (with `altMSL`, or `alt` from
/// gpsd before 3.20, and `epv`). The horizontal accuracy is `eph` (gpsd's estimated horizontal
/// error), else the larger of `epx` and `epy` (its longitude and latitude errors); neither: unknown.
public enum GPSDReport: Hashable, Sendable {
    case location(Location)
    /// A TPV without a fix (mode 0 or 1, or no coordinates).
    case noFix
    /// The banner gpsd sends on every connection.
    case version(String)
    /// Another class (SKY, GST, DEVICES, WATCH, ...), ignored.
    case other(String)
    /// Not a gpsd report: why.
    case malformed(String)

    private struct Fields: Decodable {
        var `class`: String
        var release: String?
        var mode: Int?
        var time: String?
        var lat: Double?
        var lon: Double?
        var alt: Double?
        var altMSL: Double?
        var eph: Double?
        var epx: Double?
        var epy: Double?
        var epv: Double?
        var speed: Double?
        var track: Double?
    }

    /// Parses one line (without its newline).
    public static func parse(_ line: some Collection<UInt8>) -> GPSDReport {
        let bytes = Data(line)
        guard bytes.first == UInt8(ascii: "{") else { return .malformed("not a JSON object") }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: bytes)
        } catch {
            return .malformed("not a gpsd report (\(Self.reason(error)))")
        }
        switch fields.class {
        case "TPV": return tpv(fields)
        case "VERSION": return .version(fields.release ?? "?")
        default: return .other(fields.class)
        }
    }

    private static func tpv(_ fields: Fields) -> GPSDReport {
        guard let mode = fields.mode, mode >= 2, let lat = fields.lat, let lon = fields.lon else { return .noFix }
        guard let text = fields.time, let time = timestamp(text) else { return .malformed("a fix without a valid time") }
        let fix: Location.Fix = mode >= 3 ? .threeDimensional : .twoDimensional
        let horizontal = fields.eph ?? [fields.epx, fields.epy].compactMap { $0 }.max() ?? -1
        let altitude = fix == .threeDimensional ? fields.altMSL ?? fields.alt : nil
        return .location(Location(coordinate: Coordinate(latitude: lat, longitude: lon),
                                  altitude: altitude ?? 0, horizontalAccuracy: horizontal,
                                  verticalAccuracy: altitude == nil ? -1 : fields.epv ?? -1,
                                  speed: fields.speed ?? -1, course: fields.track ?? -1,
                                  timestamp: time, fix: fix))
    }

    /// gpsd's ISO 8601 time, `2026-11-27T10:05:13.000Z` (fraction optional, always UTC),
    /// read without a locale or a formatter.
    static func timestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1.asciiValue! }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21, bytes.count <= 30, let digits = number(20..<bytes.count - 1) else { return nil }
            fraction = Double(digits) / pow(10, Double(bytes.count - 21))
        } else if bytes[19] != UInt8(ascii: "Z") {
            return nil
        }
        // Days from the civil date (Howard Hinnant's algorithm), so no calendar or time zone is consulted.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "invalid JSON" : "bad \(path)"
        case DecodingError.keyNotFound(let key, _):
            return "no \(key.stringValue)"
        default:
            return "invalid JSON"
        }
    }
}

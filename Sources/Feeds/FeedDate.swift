import Foundation

/// The dates feeds carry: RFC 822 (RSS `pubDate`, as amended by RFC 2822) and RFC 3339
/// (Atom). Parsed by hand rather than with `DateFormatter`: the result must not depend on
/// the machine's locale or time zone, and a pure function over untrusted text is easy to
/// test exhaustively. Lenient where real feeds deviate (no weekday, no seconds, two-digit
/// years, full month names, `+01:00` in an RFC 822 date), strict about ranges.
public enum FeedDate {
    /// An RSS date, or an RFC 3339 one where a feed put that in `pubDate`.
    public static func parse(_ text: String) -> Date? {
        rfc822(text) ?? rfc3339(text)
    }

    /// `Wed, 02 Oct 2002 13:00:00 GMT`, `2 Oct 2002 13:00 +0200`, `02 Oct 02 13:00:00 EST`.
    public static func rfc822(_ text: String) -> Date? {
        var fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
        // The weekday is optional and says nothing the date does not: `Wed,`, `Wed`, `Wed,02`.
        if let first = fields.first, Int(first) == nil {
            if let comma = first.firstIndex(of: ","), comma != first.index(before: first.endIndex) {
                fields[0] = String(first[first.index(after: comma)...])
            } else if weekdays.contains(String(first.lowercased().prefix(3))) {
                fields.removeFirst()
            }
        }
        guard fields.count >= 4, fields.count <= 5,
              let day = Int(fields[0]), let month = month(fields[1]), var year = Int(fields[2]),
              fields[2].count == 2 || fields[2].count == 4
        else { return nil }
        if fields[2].count == 2 { year += year < 50 ? 2000 : 1900 }
        let time = fields[3].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 2 || time.count == 3,
              let hour = Int(time[0]), let minute = Int(time[1]),
              time.allSatisfy({ $0.count == 2 || $0.count == 1 })
        else { return nil }
        let second = time.count == 3 ? Int(time[2]) : 0
        guard let second else { return nil }
        let offset = fields.count == 5 ? zoneOffset(fields[4]) : 0
        guard let offset else { return nil }
        return date(year: year, month: month, day: day, hour: hour, minute: minute, second: Double(second), offset: offset)
    }

    /// `2003-12-13T18:30:02Z`, `2003-12-13T18:30:02.25+01:00`, and a bare `2003-12-13`.
    public static func rfc3339(_ text: String) -> Date? {
        let scalars = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[index ..< index + digits] {
                guard let digit = asciiDigit(scalar) else { return nil }
                value = value * 10 + digit
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < scalars.count, characters.unicodeScalars.contains(scalars[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        if index == scalars.count {
            return date(year: year, month: month, day: day, hour: 0, minute: 0, second: 0, offset: 0)
        }
        guard expect("Tt "), let hour = number(2), expect(":"), let minute = number(2), expect(":"), let whole = number(2)
        else { return nil }
        var second = Double(whole)
        if index < scalars.count, scalars[index] == "." {
            index += 1
            var scale = 0.1
            let start = index
            while index < scalars.count, let digit = asciiDigit(scalars[index]) {
                second += Double(digit) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < scalars.count else { return nil }
        let offset: Int
        if expect("Zz") {
            offset = 0
        } else {
            let sign = scalars[index] == "-" ? -1 : 1
            guard expect("+-"), let hours = number(2), expect(":"), let minutes = number(2), minutes < 60, hours < 24 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard index == scalars.count else { return nil }
        return date(year: year, month: month, day: day, hour: hour, minute: minute, second: second, offset: offset)
    }

    private static func asciiDigit(_ scalar: Unicode.Scalar) -> Int? {
        (48 ... 57).contains(scalar.value) ? Int(scalar.value) - 48 : nil
    }

    private static let weekdays: Set = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// 1...12 for an English month name or its first three letters, in any case.
    private static func month(_ name: String) -> Int? {
        let lower = name.lowercased()
        guard lower.count >= 3, let index = months.firstIndex(of: String(lower.prefix(3))) else { return nil }
        return index + 1
    }

    /// Seconds east of UTC for RFC 822's zones: `+0200`, `+02:00`, `GMT`/`UT`/`UTC`/`Z`, and
    /// the North American names RFC 822 defines. Military single letters are ambiguous in
    /// practice; RFC 2822 says to read them as unknown, i.e. UTC.
    private static func zoneOffset(_ zone: String) -> Int? {
        let named = ["GMT": 0, "UT": 0, "UTC": 0, "Z": 0,
                     "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7]
        let upper = zone.uppercased()
        if let hours = named[upper] { return hours * 3600 }
        if upper.count == 1, upper.first!.isLetter, upper != "J" { return 0 }
        let digits = zone.dropFirst().filter { $0 != ":" }
        guard let sign = zone.first, sign == "+" || sign == "-", digits.count == 4, digits.allSatisfy(\.isASCII),
              let value = Int(digits), value % 100 < 60, value / 100 < 24
        else { return nil }
        let seconds = (value / 100) * 3600 + (value % 100) * 60
        return sign == "-" ? -seconds : seconds
    }

    /// The instant of a civil date and time at `offset` seconds east of UTC, or nil if a
    /// field is out of range (a 31 February, a 25th hour). A leap second reads as :59.
    private static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Double, offset: Int) -> Date? {
        guard (1 ... 9999).contains(year), (1 ... 12).contains(month), (0 ... 23).contains(hour),
              (0 ... 59).contains(minute), second >= 0, second < 61
        else { return nil }
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthLengths = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1 ... monthLengths[month - 1]).contains(day) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offset) + min(second, 59.999_999)
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`), so no Calendar or time zone database is consulted.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

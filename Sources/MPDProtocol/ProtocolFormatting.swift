/// Number and date formats mpd uses in replies.
public enum ProtocolFormatting {
    /// Seconds with exactly three decimals, as in `elapsed: 12.614` and `duration: 30.040`.
    public static func seconds(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "0.000" }
        let milliseconds = Int64((abs(seconds) * 1000).rounded())
        let sign = seconds < 0 && milliseconds > 0 ? "-" : ""
        let fraction = String(milliseconds % 1000)
        return "\(sign)\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// Seconds rounded to a whole number, as in `Time: 30` and both halves of status's
    /// `time: 13:30` (mpd rounds: elapsed 12.614 gives 13).
    public static func wholeSeconds(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "0" }
        return String(Int64(seconds.rounded()))
    }

    /// A Unix time as UTC ISO 8601 without fractions: `2026-11-22T06:30:35Z`.
    public static func timestamp(unixSeconds: Int64) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondsOfDay = unixSeconds - days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(secondsOfDay / 3600, 2)):\(pad(secondsOfDay % 3600 / 60, 2)):\(pad(secondsOfDay % 60, 2))Z"
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

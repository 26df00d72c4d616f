import Foundation

/// `itunes:duration` in the forms feeds use: seconds (`3723`, `3723.5`), `MM:SS` and
/// `HH:MM:SS` (`62:03` and `1:02:03` alike; the leading field may exceed 59, since many
/// feeds write an hour as `60:00`). Anything else is unreadable, not a guess.
public enum EpisodeDuration {
    public static func parse(_ text: String) -> Duration? {
        let fields = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", omittingEmptySubsequences: false)
        guard (1 ... 3).contains(fields.count) else { return nil }
        var seconds = 0.0
        for (position, field) in fields.enumerated() {
            let isLast = position == fields.count - 1
            // Nine digits is thirty years: longer is not a duration, and keeps the sum exact.
            guard !field.isEmpty, field.count <= 9, field.allSatisfy({ $0.isASCII && ($0.isNumber || isLast && $0 == ".") }),
                  field.first != ".", field.last != ".", field.filter({ $0 == "." }).count <= 1,
                  let value = Double(field)
            else { return nil }
            if position > 0, value >= 60 { return nil }
            seconds = seconds * 60 + value
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

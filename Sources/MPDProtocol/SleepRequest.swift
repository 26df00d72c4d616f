/// What `sleep` asks for: pause after a number of seconds, at the end of the item (or of its
/// chapter) being heard, or no longer (`off`).
public enum SleepRequest: Sendable, Hashable {
    case seconds(Double)
    case end
    case chapter
    case off

    /// The longest timer `sleep` takes, in seconds (a day).
    public static let longest = 86_400.0

    /// `SECONDS` (a decimal number from 1 to ``longest``), `end`, `chapter` or `off`; nil for
    /// anything else, with ``problem(with:)`` saying why.
    public init?(argument: String) {
        switch argument {
        case "end": self = .end
        case "chapter": self = .chapter
        case "off": self = .off
        default:
            guard let seconds = Self.seconds(argument) else { return nil }
            self = .seconds(seconds)
        }
    }

    /// Plain decimal digits with at most one point: no sign, exponent, `inf` or `nan`.
    private static func seconds(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 16,
              text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }),
              text.utf8.filter({ $0 == 0x2E }).count <= 1,
              let value = Double(text), value >= 1, value <= longest else { return nil }
        return value
    }

    /// Why `argument` is not a sleep request, for the ACK.
    public static func problem(with argument: String) -> String {
        let expected = "expected seconds from 1 to \(Int(longest)), end, chapter or off"
        if argument.hasPrefix("-") { return "Negative time: \(argument); \(expected)" }
        if let value = Double(argument), value.isFinite || argument.lowercased().contains("e") {
            return value > longest || !value.isFinite ? "Time too long: \(argument); \(expected)"
                : value < 1 ? "Time too short: \(argument); \(expected)"
                : "Not plain seconds: \(argument); \(expected)"
        }
        return "Not a time: \(argument); \(expected)"
    }
}

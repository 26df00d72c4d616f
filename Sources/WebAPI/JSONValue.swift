import Foundation

/// A JSON value as the WebSocket API writes it: objects keep their keys in the order given
/// (a reply's fields in mpd's order, which a person reading the messages expects), and numbers
/// are written without Foundation's float noise.
///
/// Written by hand, not with `JSONEncoder`: the time ticks are encoded on the clock thread
/// (``WebSocketClient``), up to a hundred times a second per subscription, where one short string
/// is all that is wanted.
enum JSONValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.encoded == rhs.encoded }

    /// The value as compact JSON text.
    var encoded: String {
        var text = ""
        write(to: &text)
        return text
    }

    func write(to text: inout String) {
        switch self {
        case .string(let string): Self.writeString(string, to: &text)
        case .int(let int): text += String(int)
        case .double(let double): text += Self.number(double)
        case .bool(let bool): text += bool ? "true" : "false"
        case .null: text += "null"
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(to: &text)
            }
            text += "]"
        case .object(let fields):
            text += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, to: &text)
                text += ":"
                value.write(to: &text)
            }
            text += "}"
        }
    }

    /// A finite number with at most six decimals, trailing zeros dropped (`12.34`, `10`);
    /// `null` for NaN and infinities, which JSON has no spelling for.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    static func writeString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            // U+2028 and U+2029 are valid JSON but end a line in older JavaScript engines.
            case "\u{2028}": text += "\\u2028"
            case "\u{2029}": text += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    text += String(format: "\\u%04x", scalar.value)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}

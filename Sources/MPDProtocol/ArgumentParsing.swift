/// Converts argument strings to numbers with the same rules and error texts as mpd's
/// `ArgParser.cxx`, which itself uses `strtol`, `strtoul` and `strtof`.
struct ArgumentParsing {
    /// The command name, used in the `{command}` part of every error.
    let command: String

    private func error(_ message: String) -> MPDError {
        MPDError(.argument, message, command: command)
    }

    /// `ParseCommandArgInt`: any C `int`; `Integer expected: s` or `Number too large: s`.
    func integer(_ text: String) throws(MPDError) -> Int {
        guard let scan = DecimalScan(text), scan.isComplete else { throw error("Integer expected: \(text)") }
        let value = scan.signedValue
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { throw error("Number too large: \(text)") }
        return Int(value)
    }

    /// `ParseCommandArgUnsigned`: 0 through `maximum`; negative input wraps as in `strtoul`.
    func unsigned(_ text: String, maximum: UInt64 = UInt64(UInt32.max)) throws(MPDError) -> Int {
        guard let scan = DecimalScan(text), scan.isComplete else { throw error("Integer expected: \(text)") }
        let value = scan.unsignedValue
        guard value <= maximum else { throw error("Number too large: \(text)") }
        return Int(value)
    }

    /// `ParseCommandArgBool`: exactly the integers 0 and 1.
    func boolean(_ text: String) throws(MPDError) -> Bool {
        guard let scan = DecimalScan(text), scan.isComplete, scan.signedValue == 0 || scan.signedValue == 1 else {
            throw error("Boolean (0/1) expected: \(text)")
        }
        return scan.signedValue == 1
    }

    /// `ParseCommandArgFloat`. Infinity and NaN are refused as well (mpd would misbehave on them).
    func float(_ text: String) throws(MPDError) -> Double {
        let trimmed = text.utf8.drop(while: DecimalScan.isCSpace)
        guard let value = Double(String(decoding: trimmed, as: UTF8.self)), value.isFinite else {
            throw error("Float expected: \(text)")
        }
        return value
    }

    /// `ParseCommandArgRange`: `N`, `START:END`, `START:` or `-1` (everything).
    func range(_ text: String) throws(MPDError) -> PositionRange {
        let bytes = Array(text.utf8)
        guard let startScan = DecimalScan(bytes, from: 0),
              startScan.end == bytes.count || bytes[startScan.end] == UInt8(ascii: ":")
        else { throw error("Integer or range expected: \(text)") }

        let start = startScan.signedValue
        if start == -1, startScan.end == bytes.count { return .all }
        guard start >= 0 else { throw error("Number is negative: \(text)") }
        guard start <= Int64(Int32.max) else { throw error("Number too large: \(text)") }
        guard startScan.end < bytes.count else { return .single(Int(start)) }

        let endFrom = startScan.end + 1
        guard let endScan = DecimalScan(bytes, from: endFrom) else {
            // strtol consumed nothing: an empty end means "open", anything else is an error
            guard endFrom == bytes.count else { throw error("Integer or range expected: \(text)") }
            return PositionRange(start: Int(start), end: nil)
        }
        guard endScan.end == bytes.count else { throw error("Integer or range expected: \(text)") }
        let end = endScan.signedValue
        guard end >= 0 else { throw error("Number is negative: \(text)") }
        guard end <= Int64(Int32.max) else { throw error("Number too large: \(text)") }
        guard end >= start else { throw error("Malformed range: \(text)") }
        return PositionRange(start: Int(start), end: Int(end))
    }
}

/// The part of a string `strtol`/`strtoul` (base 10) would consume: leading C white space,
/// an optional sign, and at least one digit. The magnitude saturates instead of overflowing.
struct DecimalScan {
    var isNegative = false
    var magnitude: UInt64 = 0
    var overflowed = false
    /// Index just past the last digit.
    var end = 0
    /// Whether the digits run to the end of the input.
    var isComplete: Bool { end == length }
    private var length = 0

    static func isCSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    init?(_ text: String) {
        self.init(Array(text.utf8), from: 0)
    }

    /// Scans `bytes` from `start`; `nil` when no digit follows (strtol's "no conversion").
    init?(_ bytes: [UInt8], from start: Int) {
        length = bytes.count
        var index = start
        while index < bytes.count, Self.isCSpace(bytes[index]) { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            isNegative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        let firstDigit = index
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - 0x30))
            if overflow1 || overflow2 { overflowed = true } else { magnitude = sum }
            index += 1
        }
        guard index > firstDigit else { return nil }
        end = index
    }

    /// The value `strtol` returns on a 64-bit system (clamped to the `long` range).
    var signedValue: Int64 {
        if isNegative {
            if overflowed || magnitude > UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        if overflowed || magnitude > UInt64(Int64.max) { return Int64.max }
        return Int64(magnitude)
    }

    /// The value `strtoul` returns: negative input is negated in unsigned arithmetic.
    var unsignedValue: UInt64 {
        if overflowed { return UInt64.max }
        return isNegative ? 0 &- magnitude : magnitude
    }
}

/// The part of a song that plays (`rangeid ID START:END`, MPD's `parse_time_range`): from
/// `start` to `end` in whole milliseconds, as MPD keeps `SongTime`; an `end` of 0 means the
/// song's end. Shown in song blocks as `Range: 1.000-5.000` (or `Range: 1.500-`).
public struct SongTimeRange: Hashable, Sendable {
    public var startMilliseconds: Int
    /// 0: to the end of the song.
    public var endMilliseconds: Int

    public init(startMilliseconds: Int, endMilliseconds: Int) {
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }

    /// The whole song: no `Range:` line, nothing cut.
    public static let whole = SongTimeRange(startMilliseconds: 0, endMilliseconds: 0)

    public var isWhole: Bool { startMilliseconds == 0 && endMilliseconds == 0 }

    public var start: Double { Double(startMilliseconds) / 1000 }
    /// nil: to the end of the song.
    public var end: Double? { endMilliseconds == 0 ? nil : Double(endMilliseconds) / 1000 }

    /// `START:END`, both optional non-negative seconds (`strtof`'s numbers); an empty side is 0.
    /// nil where MPD answers `Bad range`: no colon, a negative or trailing text, or an end
    /// that is not after the start.
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard let start = Self.float(bytes, from: 0), start.end < bytes.count, bytes[start.end] == UInt8(ascii: ":"),
              start.value >= 0,
              let end = Self.float(bytes, from: start.end + 1), end.end == bytes.count, end.value >= 0
        else { return nil }
        startMilliseconds = Self.milliseconds(start.value)
        endMilliseconds = Self.milliseconds(end.value)
        guard endMilliseconds == 0 || endMilliseconds > startMilliseconds else { return nil }
    }

    /// The `Range:` value: `1.000-5.000`, `1.500-`; nil for the whole song.
    public var protocolText: String? {
        if endMilliseconds > 0 { return "\(Self.text(startMilliseconds))-\(Self.text(endMilliseconds))" }
        if startMilliseconds > 0 { return "\(Self.text(startMilliseconds))-" }
        return nil
    }

    /// MPD's `SongTime::FromS` of a float: milliseconds, the fraction dropped.
    private static func milliseconds(_ seconds: Float) -> Int {
        let value = seconds * 1000
        return value < Float(Int32.max) ? Int(value) : Int(Int32.max)
    }

    private static func text(_ milliseconds: Int) -> String {
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    /// What `strtof` reads at `offset`: a decimal number (sign, digits, fraction, exponent)
    /// after blanks, its value (0 and `offset` itself when it reads nothing, as `strtof`
    /// leaves `endptr` at the start). nil for infinities and NaN, which no range has.
    private static func float(_ bytes: [UInt8], from offset: Int) -> (value: Float, end: Int)? {
        var index = offset
        while index < bytes.count, DecimalScan.isCSpace(bytes[index]) { index += 1 }
        let numberStart = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        var digits = index - digitsStart
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            digits += index - fractionStart
        }
        guard digits > 0 else { return (0, offset) }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            var exponent = index + 1
            if exponent < bytes.count, bytes[exponent] == UInt8(ascii: "+") || bytes[exponent] == UInt8(ascii: "-") { exponent += 1 }
            let exponentDigits = exponent
            while exponent < bytes.count, isDigit(bytes[exponent]) { exponent += 1 }
            if exponent > exponentDigits { index = exponent }
        }
        guard let value = Float(String(decoding: bytes[numberStart..<index], as: UTF8.self)), value.isFinite else { return nil }
        return (value, index)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}

/// Byte classes used by mpd's tokenizer (`util/CharUtil.hxx`), as plain comparisons
/// (range `contains` is generic code, slow in debug builds).
enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let newline = UInt8(ascii: "\n")

    /// mpd's `IsWhitespaceOrNull`: every byte up to and including the space.
    static func isWhitespaceOrNull(_ byte: UInt8) -> Bool { byte <= 0x20 }

    static func isLowercaseLetter(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }

    /// Letters, digits and `_`: what a command name may contain after its first letter.
    static func isWordCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
            || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
    }

    /// What an unquoted argument may contain: anything visible except `"` and `'` (UTF-8 included).
    static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != quote && byte != 0x27
    }
}

/// Byte-string helpers over a line's storage, written as plain loops: they run for every
/// request line (and a command list may hold 400,000), and the generic collection
/// algorithms are slow in debug builds.
enum Bytes {
    typealias Line = UnsafeBufferPointer<UInt8>

    static func equal(_ line: Line, _ other: [UInt8]) -> Bool {
        guard line.count == other.count else { return false }
        var index = 0
        while index < other.count {
            if line[index] != other[index] { return false }
            index += 1
        }
        return true
    }

    /// The line as mpd sees it: cut at a NUL byte, trailing white space (and `\r`) removed.
    static func normalized(_ line: Line) -> Line {
        var end = 0
        while end < line.count, line[end] != 0 { end += 1 }
        while end > 0, Byte.isWhitespaceOrNull(line[end - 1]) { end -= 1 }
        return Line(rebasing: line[0..<end])
    }

    /// The line up to its first whitespace byte: the command name, if it is one.
    static func firstWord(_ line: Line) -> Line {
        var end = 0
        while end < line.count, !Byte.isWhitespaceOrNull(line[end]) { end += 1 }
        return Line(rebasing: line[0..<end])
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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

/// Byte-string helpers over a line's storage, written as plain loops or libc's `memchr` and
/// `memcmp`: they run for every request line (and a command list may hold 400,000), and the
/// generic collection algorithms are slow in debug builds.
enum Bytes {
    typealias Line = UnsafeBufferPointer<UInt8>

    static func equal(_ line: Line, _ other: [UInt8]) -> Bool {
        guard line.count == other.count else { return false }
        guard line.count > 0 else { return true }
        return other.withUnsafeBufferPointer { memcmp(line.baseAddress!, $0.baseAddress!, line.count) == 0 }
    }

    static func equal(_ line: Line, _ other: Line) -> Bool {
        line.count == other.count && (line.count == 0 || memcmp(line.baseAddress!, other.baseAddress!, line.count) == 0)
    }

    /// Where `byte` first occurs in `buffer` at or after `start`, if it does: libc's `memchr`
    /// (every byte received is searched for a line's end, and an indexed Swift loop is a call
    /// per byte in a debug build).
    static func index(of byte: UInt8, in buffer: Line, from start: Int) -> Int? {
        guard start < buffer.count, let base = buffer.baseAddress,
              let found = memchr(base + start, Int32(byte), buffer.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// The line as mpd sees it: cut at a NUL byte, trailing white space (and `\r`) removed.
    static func normalized(_ line: Line) -> Line {
        var end = index(of: 0, in: line, from: 0) ?? line.count
        while end > 0, Byte.isWhitespaceOrNull(line[end - 1]) { end -= 1 }
        return prefix(line, end)
    }

    /// The line up to its first whitespace byte: the command name, if it is one.
    static func firstWord(_ line: Line) -> Line {
        var end = 0
        while end < line.count, !Byte.isWhitespaceOrNull(line[end]) { end += 1 }
        return prefix(line, end)
    }

    /// The first `count` bytes of `line` (not through a `Slice`, whose generic metadata a
    /// debug build looks up at each call).
    static func prefix(_ line: Line, _ count: Int) -> Line {
        Line(start: line.baseAddress, count: count)
    }
}

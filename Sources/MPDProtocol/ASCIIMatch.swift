/// Filter string tests on plain ASCII text, byte by byte.
///
/// `search` folds case and looks for substrings in every tag of every song: with `String`'s
/// `lowercased()` and `contains(_:)` that is a new string and a substring searcher (with its
/// tables) per tag value, which made a `search any` of a 10,000-song library cost tens of
/// milliseconds. Most tag values are plain ASCII, where lower-casing is a byte map and a
/// `Character` is one byte, so the same test can run on the UTF-8 bytes in place.
///
/// "Plain" excludes carriage return, which with a following line feed forms one `Character`
/// (a byte-wise match could split it where `String` would not).
///
/// A plain value is also tested byte by byte against a tag with non-ASCII text (`Nyström`,
/// `東京 Nights`), which a library has plenty of, as long as the answer is the one `String`
/// gives: an ASCII character equals only itself, so a byte match counts where it starts and
/// ends between two `Character`s, which is certain next to an ASCII byte or an end of the
/// text. A match next to a non-ASCII byte (`e` in `e` + U+0301) is left to `String`, as is text
/// holding one of the four characters that are ASCII after lower-casing or canonical
/// equivalence (U+0130 `İ`, U+212A Kelvin, U+037E Greek question mark, U+1FEF varia).
enum ASCIIMatch {
    /// True if every byte is ASCII and none is a carriage return.
    static func isPlain(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 && $0 != 0x0D }
    }

    /// The test of `candidate` against `wanted` (plain ASCII, already lower-cased when
    /// `foldCase`), or nil when `candidate` is not plain ASCII and the caller must compare strings.
    static func matches(_ candidate: String, _ wanted: [UInt8], foldCase: Bool,
                        position: SongFilter.StringTest.Position) -> Bool? {
        var candidate = candidate
        return candidate.withUTF8 { subject -> Bool? in
            guard isPlain(subject) else { return matchesMixed(subject, wanted, foldCase: foldCase, position: position) }
            switch position {
            case .whole:
                return subject.count == wanted.count && equal(subject, from: 0, wanted, foldCase: foldCase)
            case .prefix:
                return subject.count >= wanted.count && equal(subject, from: 0, wanted, foldCase: foldCase)
            case .anywhere:
                guard subject.count >= wanted.count else { return false }
                for start in 0...(subject.count - wanted.count) where equal(subject, from: start, wanted, foldCase: foldCase) {
                    return true
                }
                return false
            }
        }
    }

    /// The test of text with non-ASCII bytes against plain `wanted`, or nil where only
    /// `String` can tell (see the type's comment).
    private static func matchesMixed(_ subject: UnsafeBufferPointer<UInt8>, _ wanted: [UInt8], foldCase: Bool,
                                     position: SongFilter.StringTest.Position) -> Bool? {
        guard !hasASCIIEquivalent(subject) else { return nil }
        /// Whether a `Character` boundary lies before `subject[index]` next to an ASCII byte.
        func isBoundary(_ index: Int) -> Bool {
            index == 0 || index == subject.count || (subject[index - 1] < 0x80 && subject[index] < 0x80)
        }
        switch position {
        case .whole:
            // Non-ASCII text never equals ASCII text (the characters that could are excluded).
            return false
        case .prefix:
            guard subject.count >= wanted.count else { return false }
            guard equal(subject, from: 0, wanted, foldCase: foldCase) else { return false }
            return isBoundary(wanted.count) ? true : nil
        case .anywhere:
            guard !wanted.isEmpty else { return true }
            guard subject.count >= wanted.count else { return false }
            var uncertain = false
            for start in 0...(subject.count - wanted.count) where equal(subject, from: start, wanted, foldCase: foldCase) {
                if isBoundary(start) && isBoundary(start + wanted.count) { return true }
                uncertain = true
            }
            return uncertain ? nil : false
        }
    }

    /// The longest run of bytes of `wanted` (not plain ASCII, lower-cased if case is folded)
    /// that every text matching it must hold: ASCII bytes other than CR and LF, each followed
    /// by another such byte or ending `wanted` (an ASCII letter followed by a combining mark
    /// is part of a `Character` that text may spell precomposed). Nil if there is none.
    static func requiredRun(of wanted: String) -> [UInt8]? {
        let bytes = Array(wanted.utf8)
        func isSafe(_ index: Int) -> Bool {
            bytes[index] < 0x80 && bytes[index] != 0x0A && bytes[index] != 0x0D
                && (index + 1 == bytes.count || bytes[index + 1] < 0x80)
        }
        var best: Range<Int> = 0..<0
        var start = 0
        for index in 0...bytes.count {
            if index < bytes.count && isSafe(index) { continue }
            if index - start > best.count { best = start..<index }
            start = index + 1
        }
        return best.isEmpty ? nil : Array(bytes[best])
    }

    /// True if `candidate` cannot match a value whose ``requiredRun(of:)`` is `run`: it
    /// lacks those bytes (with ASCII case folded if asked) and holds none of the characters
    /// that become ASCII by folding or equivalence. False means only `String` can tell.
    static func lacks(_ run: [UInt8], in candidate: String, foldCase: Bool) -> Bool {
        var candidate = candidate
        return candidate.withUTF8 { subject in
            guard subject.count >= run.count else { return !hasASCIIEquivalent(subject) }
            for start in 0...(subject.count - run.count) where equal(subject, from: start, run, foldCase: foldCase) {
                return false
            }
            return !hasASCIIEquivalent(subject)
        }
    }

    /// Whether the text holds a carriage return or a character that is ASCII once lower-cased
    /// or canonically equivalent to ASCII: U+0130 (C4 B0), U+212A (E2 84 AA), U+037E (CD BE),
    /// U+1FEF (E1 BF AF).
    private static func hasASCIIEquivalent(_ subject: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < subject.count {
            switch subject[index] {
            case 0x0D: return true
            case 0xC4 where index + 1 < subject.count && subject[index + 1] == 0xB0: return true
            case 0xCD where index + 1 < subject.count && subject[index + 1] == 0xBE: return true
            case 0xE2 where index + 2 < subject.count && subject[index + 1] == 0x84 && subject[index + 2] == 0xAA: return true
            case 0xE1 where index + 2 < subject.count && subject[index + 1] == 0xBF && subject[index + 2] == 0xAF: return true
            default: break
            }
            index += 1
        }
        return false
    }

    /// Whether `subject[start...]` begins with `wanted`, folding `subject`'s case if asked.
    private static func equal(_ subject: UnsafeBufferPointer<UInt8>, from start: Int, _ wanted: [UInt8], foldCase: Bool) -> Bool {
        for index in wanted.indices {
            let byte = subject[start + index]
            if (foldCase ? ASCII.lower(byte) : byte) != wanted[index] { return false }
        }
        return true
    }
}

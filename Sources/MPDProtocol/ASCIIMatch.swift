/// Filter string tests on plain ASCII text, byte by byte.
///
/// `search` folds case and looks for substrings in every tag of every song: with `String`'s
/// `lowercased()` and `contains(_:)` that is a new string and a substring searcher (with its
/// tables) per tag value, which made a `search any` of a 10,000-song library cost tens of
/// milliseconds. Most tag values are plain ASCII, where lower-casing is a byte map and a
/// `Character` is one byte, so the same test can run on the UTF-8 bytes in place.
///
/// "Plain" excludes carriage return, which with a following line feed forms one `Character`
/// (a byte-wise match could split it where `String` would not); such text, and any text with
/// a non-ASCII byte, takes `String`'s way.
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
            guard isPlain(subject) else { return nil }
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

    /// Whether `subject[start...]` begins with `wanted`, folding `subject`'s case if asked.
    private static func equal(_ subject: UnsafeBufferPointer<UInt8>, from start: Int, _ wanted: [UInt8], foldCase: Bool) -> Bool {
        for index in wanted.indices {
            let byte = subject[start + index]
            if (foldCase ? ASCII.lower(byte) : byte) != wanted[index] { return false }
        }
        return true
    }
}

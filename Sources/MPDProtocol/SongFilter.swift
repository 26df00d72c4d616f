/// What a filter can ask of a song: its URI, its tags, when its file changed and its format.
///
/// The library's songs and the queue's entries both answer it, so `find`, `search`,
/// `list`, `count`, `playlistfind` and `playlistsearch` share one filter.
public protocol FilterableSong {
    /// The song's URI relative to the music directory (`file:`).
    var uri: String { get }
    /// Every tag value the song has, in the file's order. A stored array in the library's
    /// songs: a search tests every song, so this must not build anything per call.
    var tags: [SongInfo.Tag] { get }
    /// When the file was last modified (seconds since 1970), if known.
    var lastModified: Int64? { get }
    /// `samplerate:bits:channels`, as the `Format:` line shows it, if known.
    var audioFormat: String? { get }
}

/// A song filter as the MPD protocol has it: the expression syntax of MPD 0.21 on
/// (`(Artist == 'x')`, `(!(...))`, `((...) AND (...))`, `(base 'dir')`, ...) and the older
/// `TAG VALUE` pairs, which clients such as mpc 0.34 and python-mpd2 still send.
///
/// `find` compares whole values, case-sensitively; `search` folds case and, in the old
/// pair syntax, matches substrings (MPD 0.20's behaviour, kept for those clients).
/// Every part must match (the parts are ANDed).
public struct SongFilter: Sendable, Hashable {
    /// One test of a song.
    public indirect enum Expression: Sendable {
        /// A tag's values (`nil`: any tag) tested with a string test.
        case tag(TagType?, StringTest)
        /// The URI tested with a string test (`file`).
        case uri(StringTest)
        /// The song lies inside this directory (`base`).
        case base(String)
        /// The file changed at or after this time (`modified-since`, seconds since 1970).
        case modifiedSince(Int64)
        /// The audio format is exactly this, or matches it with `*` wildcards (`=~`).
        case audioFormat(String, wildcards: Bool)
        case not(Expression)
        case and([Expression])
    }

    /// How a string is tested.
    public struct StringTest: Sendable {
        public enum Position: Sendable { case whole, prefix, anywhere }
        public let value: String
        public let foldCase: Bool
        public let position: Position
        public let negated: Bool
        /// A compiled regular expression (`=~`, `!~`); `value` is its source.
        var pattern: CompiledPattern?
        /// `value`, lower-cased when folding case: folded once, not once per song.
        private let wanted: String
        /// `wanted`'s bytes when it is plain ASCII: a song's plain ASCII value is then tested
        /// byte by byte, without the lower-cased copy and the substring searcher's tables that
        /// cost most of a `search` over a large library.
        private let wantedASCII: [UInt8]?
        /// For a value that is not plain ASCII (`Nyström`): its longest run of ASCII characters
        /// that every match must contain as bytes (``ASCIIMatch/requiredRun(of:)``), so that the
        /// songs without it are ruled out without a lower-cased copy and a substring searcher.
        private let requiredRun: [UInt8]?

        init(value: String, foldCase: Bool, position: Position, negated: Bool) {
            self.value = value
            self.foldCase = foldCase
            self.position = position
            self.negated = negated
            wanted = foldCase ? value.lowercased() : value
            wantedASCII = ASCIIMatch.isPlain(value.utf8) ? Array(wanted.utf8) : nil
            requiredRun = wantedASCII == nil ? ASCIIMatch.requiredRun(of: wanted) : nil
        }

        /// True if `candidate` passes the test, ignoring ``negated``.
        func matchesIgnoringNegation(_ candidate: String) -> Bool {
            if let pattern { return pattern.matches(candidate) }
            if let wantedASCII,
               let found = ASCIIMatch.matches(candidate, wantedASCII, foldCase: foldCase, position: position) {
                return found
            }
            if let requiredRun, ASCIIMatch.lacks(requiredRun, in: candidate, foldCase: foldCase) { return false }
            let subject = foldCase ? candidate.lowercased() : candidate
            switch position {
            case .whole: return subject == wanted
            case .prefix: return subject.hasPrefix(wanted)
            case .anywhere: return wanted.isEmpty || subject.contains(wanted)
            }
        }
    }

    /// The parts, all of which must match.
    public let expressions: [Expression]
    /// The arguments the filter was parsed from: two filters are equal when these are.
    public let arguments: [String]
    /// Whether values are compared with case folded (`search`), or exactly (`find`).
    public let foldCase: Bool

    public static func == (lhs: SongFilter, rhs: SongFilter) -> Bool {
        lhs.arguments == rhs.arguments && lhs.foldCase == rhs.foldCase
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(arguments)
        hasher.combine(foldCase)
    }

    /// Parses the filter arguments of `find`, `search` and their kin.
    ///
    /// - Parameters:
    ///   - arguments: the command's filter arguments (one expression each, or TAG VALUE pairs).
    ///   - foldCase: true for `search`-style commands.
    /// - Throws: `ACK [2@0]` with MPD's message for a malformed filter.
    public init(arguments: some Collection<String>, foldCase: Bool) throws(MPDError) {
        var parts: [Expression] = []
        var rest = arguments[...]
        if rest.isEmpty { throw MPDError(.argument, "Incorrect number of filter arguments") }
        while let first = rest.first {
            if first.hasPrefix("(") {
                var parser = ExpressionParser(Array(first.utf8), foldCase: foldCase)
                parts.append(try parser.parseWhole())
                rest = rest.dropFirst()
                continue
            }
            guard rest.count >= 2 else { throw MPDError(.argument, "Incorrect number of filter arguments") }
            let value = rest[rest.index(after: rest.startIndex)]
            parts.append(try Self.pair(tag: first, value: value, foldCase: foldCase))
            rest = rest.dropFirst(2)
        }
        expressions = parts
        self.arguments = Array(arguments)
        self.foldCase = foldCase
    }

    /// True if `song` passes every part.
    public func matches(_ song: some FilterableSong) -> Bool {
        expressions.allSatisfy { Self.evaluate($0, song) }
    }

    // MARK: - The old TAG VALUE pairs

    private static func pair(tag: String, value: String, foldCase: Bool) throws(MPDError) -> Expression {
        let position: StringTest.Position = foldCase ? .anywhere : .whole
        let test = StringTest(value: value, foldCase: foldCase, position: position, negated: false)
        switch FilterKey(tag) {
        case nil: throw MPDError(.argument, "Unknown filter type")
        case .base:
            guard isSafeRelativeURI(value) else { throw MPDError(.argument, "Bad URI") }
            return .base(value)
        case .modifiedSince: return .modifiedSince(try Timestamp.parse(value))
        case .file: return .uri(test)
        case .audioFormat: return .audioFormat(value, wildcards: false)
        case .any: return .tag(nil, test)
        case .tag(let type): return .tag(type, test)
        }
    }

    /// MPD's `uri_safe_local`: relative, no `.`/`..` segments, no empty segments.
    public static func isSafeRelativeURI(_ uri: String) -> Bool {
        if uri.isEmpty { return true }
        if uri.hasPrefix("/") { return false }
        return uri.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    // MARK: - Evaluation

    private static func evaluate(_ expression: Expression, _ song: some FilterableSong) -> Bool {
        switch expression {
        case .and(let parts): return parts.allSatisfy { evaluate($0, song) }
        case .not(let inner): return !evaluate(inner, song)
        case .uri(let test): return test.matchesIgnoringNegation(song.uri) != test.negated
        case .base(let directory):
            return directory.isEmpty || song.uri.hasPrefix(directory.hasSuffix("/") ? directory : directory + "/")
        case .modifiedSince(let time): return (song.lastModified ?? Int64.min) >= time
        case .audioFormat(let wanted, let wildcards):
            guard let format = song.audioFormat else { return false }
            return wildcards ? AudioFormatMask(wanted).matches(format) : format == wanted
        case .tag(let type, let test): return matchTag(type, test, song.tags)
        }
    }

    /// A tag test: true if any value of the tag passes (false for a negated test). A song
    /// without the tag is tested against its fallback tag (AlbumArtist falls back to
    /// Artist, AlbumSort to Album, ...), and an absent tag equals the empty string.
    private static func matchTag(_ type: TagType?, _ test: StringTest, _ values: [SongInfo.Tag]) -> Bool {
        for item in values where (type == nil || item.type == type) && test.matchesIgnoringNegation(item.value) {
            return !test.negated
        }
        guard let type, !values.contains(where: { $0.type == type }) else { return test.negated }
        for fallback in type.fallbacks where values.contains(where: { $0.type == fallback }) {
            let found = values.contains { $0.type == fallback && test.matchesIgnoringNegation($0.value) }
            return found != test.negated
        }
        return test.value.isEmpty ? !test.negated : test.negated
    }
}

extension TagType {
    /// The tags whose values stand in for this one when a song lacks it, in order (MPD's
    /// `ApplyTagFallback`).
    public var fallbacks: [TagType] {
        switch self {
        case .albumArtistSort: [.albumArtist, .artistSort, .artist]
        case .albumArtist, .artistSort: [.artist]
        case .albumSort: [.album]
        case .composerSort: [.composer]
        default: []
        }
    }
}

/// A filter's key word: a tag, or one of the special keys.
public enum FilterKey: Hashable, Sendable {
    case any, file, base, modifiedSince, audioFormat
    case tag(TagType)

    /// The name as a reply line's key (`Artist`, `file`).
    public var protocolName: String {
        switch self {
        case .any: "any"
        case .file: "file"
        case .base: "base"
        case .modifiedSince: "modified-since"
        case .audioFormat: "AudioFormat"
        case .tag(let type): type.protocolName
        }
    }

    public init?(_ name: String) {
        switch name {
        case "base": self = .base
        case "modified-since": self = .modifiedSince
        case _ where ASCII.equalsIgnoringCase(name, "any"): self = .any
        case _ where ASCII.equalsIgnoringCase(name, "file"): self = .file
        case _ where ASCII.equalsIgnoringCase(name, "AudioFormat"): self = .audioFormat
        default:
            guard let type = TagType(protocolName: name) else { return nil }
            self = .tag(type)
        }
    }
}

/// An `AudioFormat =~ '44100:*:2'` mask: each of the three fields equal, or `*`.
struct AudioFormatMask {
    let fields: [Substring]
    init(_ mask: String) { fields = mask.split(separator: ":", omittingEmptySubsequences: false) }

    func matches(_ format: String) -> Bool {
        let actual = format.split(separator: ":", omittingEmptySubsequences: false)
        guard actual.count == fields.count else { return false }
        return zip(fields, actual).allSatisfy { $0 == "*" || $0 == $1 }
    }
}

/// A regular expression compiled once. `Regex` holds no shared mutable state; the
/// wrapper exists because `Regex<AnyRegexOutput>` is not declared `Sendable`.
final class CompiledPattern: @unchecked Sendable {
    private let regex: Regex<AnyRegexOutput>

    init(_ source: String, foldCase: Bool) throws(MPDError) {
        do {
            let compiled = try Regex(source)
            regex = foldCase ? compiled.ignoresCase() : compiled
        } catch {
            throw MPDError(.argument, "Invalid regular expression")
        }
    }

    /// True if the pattern matches anywhere in `candidate` (PCRE's unanchored match).
    func matches(_ candidate: String) -> Bool {
        (try? regex.firstMatch(in: candidate)) != nil
    }
}

/// Parses one parenthesised filter expression, byte by byte, with MPD's error messages.
struct ExpressionParser {
    private let bytes: [UInt8]
    private var index = 0
    private let foldCase: Bool

    init(_ bytes: [UInt8], foldCase: Bool) {
        self.bytes = bytes
        self.foldCase = foldCase
    }

    /// The whole argument as one expression, with nothing after it.
    mutating func parseWhole() throws(MPDError) -> SongFilter.Expression {
        let expression = try parseExpression()
        guard index == bytes.count else { throw Self.error("Unparsed garbage after expression") }
        return expression
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func parseExpression() throws(MPDError) -> SongFilter.Expression {
        try expect(UInt8(ascii: "("), "'(' expected")
        if current == UInt8(ascii: "(") {
            let first = try parseExpression()
            if try closes() { return first }
            var parts = [first]
            repeat {
                guard try word() == "AND" else { throw Self.error("'AND' expected") }
                parts.append(try parseExpression())
            } while try !closes()
            return .and(parts)
        }
        if current == UInt8(ascii: "!") {
            advance()
            guard current == UInt8(ascii: "(") else { throw Self.error("'(' expected") }
            let inner = try parseExpression()
            guard try closes() else { throw Self.error("')' expected") }
            return .not(inner)
        }
        let name = try word()
        guard let key = FilterKey(name) else { throw Self.error("Unknown filter type: \(name)") }
        let expression: SongFilter.Expression
        switch key {
        case .modifiedSince: expression = .modifiedSince(try Timestamp.parse(try quoted()))
        case .base: expression = .base(try quoted())
        case .audioFormat:
            let wildcards: Bool
            if take("==") { wildcards = false } else if take("=~") { wildcards = true } else {
                throw Self.error("'==' or '=~' expected")
            }
            skipSpaces()
            expression = .audioFormat(try quoted(), wildcards: wildcards)
        case .file: expression = .uri(try stringTest())
        case .any: expression = .tag(nil, try stringTest())
        case .tag(let type): expression = .tag(type, try stringTest())
        }
        guard try closes() else { throw Self.error("')' expected") }
        return expression
    }

    /// An operator and its quoted operand.
    private mutating func stringTest() throws(MPDError) -> SongFilter.StringTest {
        for (word, position) in [("contains", SongFilter.StringTest.Position.anywhere), ("starts_with", .prefix)] {
            for negated in [false, true] where take((negated ? "!" : "") + word + " ") {
                skipSpaces()
                return SongFilter.StringTest(value: try quoted(), foldCase: foldCase, position: position, negated: negated)
            }
        }
        for (symbol, negated) in [("=~", false), ("!~", true)] where take(symbol) {
            skipSpaces()
            let source = try quoted()
            var test = SongFilter.StringTest(value: source, foldCase: foldCase, position: .whole, negated: negated)
            test.pattern = try CompiledPattern(source, foldCase: foldCase)
            return test
        }
        for (symbol, negated) in [("==", false), ("!=", true)] where take(symbol) {
            skipSpaces()
            return SongFilter.StringTest(value: try quoted(), foldCase: foldCase, position: .whole, negated: negated)
        }
        let rest = String(decoding: bytes[index...], as: UTF8.self)
        throw Self.error("Unknown filter operator: \(rest)")
    }

    /// A word of letters, `_` and `-`, and the spaces after it.
    private mutating func word() throws(MPDError) -> String {
        let start = index
        while let byte = current, Self.isWordByte(byte) { advance(skippingSpaces: false) }
        guard index > start else { throw Self.error("Word expected") }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        skipSpaces()
        return text
    }

    /// A string in single or double quotes (a backslash takes the next byte as it is), and the spaces after it.
    private mutating func quoted() throws(MPDError) -> String {
        guard let quote = current, quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") else {
            throw Self.error("Quoted string expected")
        }
        index += 1
        var value: [UInt8] = []
        while true {
            guard var byte = current else { throw Self.error("Closing quote not found") }
            if byte == quote { break }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = current else { throw Self.error("Closing quote not found") }
                byte = escaped
            }
            value.append(byte)
            index += 1
        }
        advance()
        return String(decoding: value, as: UTF8.self)
    }

    /// Consumes `)` (and the spaces after it) if it comes next.
    private mutating func closes() throws(MPDError) -> Bool {
        guard current == UInt8(ascii: ")") else { return false }
        advance()
        return true
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(MPDError) {
        guard current == byte else { throw Self.error(message) }
        advance()
    }

    /// Consumes `text` if the input continues with it (ASCII case ignored, as MPD's operators).
    private mutating func take(_ text: String) -> Bool {
        let wanted = Array(text.utf8)
        guard bytes.count - index >= wanted.count,
              zip(bytes[index...], wanted).allSatisfy({ ASCII.lower($0) == ASCII.lower($1) }) else { return false }
        index += wanted.count
        return true
    }

    private mutating func advance(skippingSpaces: Bool = true) {
        index += 1
        if skippingSpaces { skipSpaces() }
    }

    private mutating func skipSpaces() {
        while let byte = current, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    static func error(_ message: String) -> MPDError { MPDError(.argument, message) }
}

/// `modified-since` values: a UNIX time, or an ISO 8601 date (`2024-05-01`) or UTC time
/// (`2024-05-01T12:00:00Z`).
enum Timestamp {
    static func parse(_ text: String) throws(MPDError) -> Int64 {
        if let seconds = Int64(text), seconds >= 0 { return seconds }
        let parts = text.split(whereSeparator: { "-T:Z".contains($0) }).map { Int($0) }
        guard parts.allSatisfy({ $0 != nil }), [3, 5, 6].contains(parts.count) else {
            throw MPDError(.argument, "Failed to parse time stamp")
        }
        let numbers = parts.map { $0! } + [0, 0, 0]
        let (year, month, day) = (numbers[0], numbers[1], numbers[2])
        guard (1...12).contains(month), (1...31).contains(day), numbers[3] < 24, numbers[4] < 60, numbers[5] < 61 else {
            throw MPDError(.argument, "Failed to parse time stamp")
        }
        return Int64(daysFromCivil(year, month, day)) * 86_400 + Int64(numbers[3] * 3_600 + numbers[4] * 60 + numbers[5])
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

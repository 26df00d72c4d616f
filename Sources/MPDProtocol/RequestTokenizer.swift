/// Splits a request line into a ``Request`` with exactly the rules of mpd's `Tokenizer`.
struct RequestTokenizer {
    private let bytes: [UInt8]
    private var position = 0

    init(line: [UInt8]) {
        var bytes = line
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        while let last = bytes.last, Byte.isWhitespaceOrNull(last) { bytes.removeLast() }
        self.bytes = bytes
    }

    mutating func request() throws(RequestParseError) -> Request {
        guard let first = bytes.first, Byte.isLowercaseLetter(first) else { throw .malformed }
        let name = try commandName()
        var arguments: [String] = []
        while true {
            if arguments.count == Request.argumentLimit {
                throw .invalidArgument(MPDError(.argument, "Too many arguments"))
            }
            guard let argument = try nextArgument() else { break }
            arguments.append(argument)
        }
        return Request(name: name, arguments: arguments)
    }

    private var isAtEnd: Bool { position == bytes.count }

    private mutating func skipWhitespace() {
        while !isAtEnd, Byte.isWhitespaceOrNull(bytes[position]) { position += 1 }
    }

    private mutating func commandName() throws(RequestParseError) -> String {
        let start = position
        position += 1
        while !isAtEnd, !Byte.isWhitespaceOrNull(bytes[position]) {
            guard Byte.isWordCharacter(bytes[position]) else {
                throw .invalidCommandName(MPDError(.unknown, "Invalid word character"))
            }
            position += 1
        }
        let name = String(decoding: bytes[start..<position], as: UTF8.self)
        skipWhitespace()
        return name
    }

    private mutating func nextArgument() throws(RequestParseError) -> String? {
        guard !isAtEnd else { return nil }
        return bytes[position] == Byte.quote ? try quotedArgument() : try bareArgument()
    }

    private mutating func bareArgument() throws(RequestParseError) -> String {
        let start = position
        while !isAtEnd, !Byte.isWhitespaceOrNull(bytes[position]) {
            guard Byte.isUnquotedCharacter(bytes[position]) else {
                throw .invalidArgument(MPDError(.unknown, "Invalid unquoted character"))
            }
            position += 1
        }
        let argument = String(decoding: bytes[start..<position], as: UTF8.self)
        skipWhitespace()
        return argument
    }

    private mutating func quotedArgument() throws(RequestParseError) -> String {
        position += 1  // the opening quote
        var value: [UInt8] = []
        while true {
            guard !isAtEnd else { throw .invalidArgument(MPDError(.unknown, "Missing closing '\"'")) }
            var byte = bytes[position]
            if byte == Byte.quote { break }
            if byte == Byte.backslash {
                position += 1
                guard !isAtEnd else { throw .invalidArgument(MPDError(.unknown, "Missing closing '\"'")) }
                byte = bytes[position]
            }
            value.append(byte)
            position += 1
        }
        position += 1  // the closing quote
        if !isAtEnd, !Byte.isWhitespaceOrNull(bytes[position]) {
            throw .invalidArgument(MPDError(.unknown, "Space expected after closing '\"'"))
        }
        skipWhitespace()
        return String(decoding: value, as: UTF8.self)
    }
}

/// Byte classes used by mpd's tokenizer (`util/CharUtil.hxx`).
enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let newline = UInt8(ascii: "\n")

    /// mpd's `IsWhitespaceOrNull`: every byte up to and including the space.
    static func isWhitespaceOrNull(_ byte: UInt8) -> Bool { byte <= 0x20 }

    static func isLowercaseLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) }

    /// Letters, digits and `_`: what a command name may contain after its first letter.
    static func isWordCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
            || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "_")
    }

    /// What an unquoted argument may contain: anything visible except `"` and `'` (UTF-8 included).
    static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != quote && byte != UInt8(ascii: "'")
    }
}

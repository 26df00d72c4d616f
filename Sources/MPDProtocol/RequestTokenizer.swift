/// Splits a request line into a ``Request`` with exactly the rules of mpd's `Tokenizer`.
///
/// It works on the line's storage in place with plain loops: a client may send hundreds of
/// thousands of lines (a command list may hold 2 MiB of them), and every line is tokenized.
/// It only lives inside ``request(_:)``, while the storage it points to is borrowed.
struct RequestTokenizer {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// The end of the line once trailing whitespace and anything from a NUL byte on are cut.
    private let end: Int
    private var position = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        var end = 0
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        while end > 0, Byte.isWhitespaceOrNull(bytes[end - 1]) { end -= 1 }
        self.end = end
    }

    /// Tokenizes `line` (without its `\n`).
    static func request(_ line: some Collection<UInt8>) throws(RequestParseError) -> Request {
        let parsed = line.withContiguousStorageIfAvailable { buffer in Self.result(buffer) }
        if let parsed { return try parsed.get() }
        return try Array(line).withUnsafeBufferPointer { buffer in Self.result(buffer) }.get()
    }

    private static func result(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Request, RequestParseError> {
        var tokenizer = RequestTokenizer(bytes: buffer)
        do { return .success(try tokenizer.request()) } catch { return .failure(error) }
    }

    mutating func request() throws(RequestParseError) -> Request {
        guard end > 0, Byte.isLowercaseLetter(bytes[0]) else { throw .malformed }
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

    private var isAtEnd: Bool { position == end }

    private mutating func skipWhitespace() {
        while !isAtEnd, Byte.isWhitespaceOrNull(bytes[position]) { position += 1 }
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
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
        let name = text(start..<position)
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
        let argument = text(start..<position)
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

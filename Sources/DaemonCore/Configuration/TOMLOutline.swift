/// What the configuration file needs of a TOML document besides its values, in one linear pass
/// over its bytes before TOMLKit parses it (once): the line each top-level key starts on, and
/// the bounds that keep a hostile file from costing more than a page of settings does. TOMLKit
/// (toml++) recurses into a dotted key's parts and into nested arrays (a header of a million
/// parts overflows the stack), and grows memory with every key; the outline refuses such a
/// document before TOMLKit sees it.
///
/// The scan knows only what separates statements: comments, the four kinds of strings, the
/// brackets of arrays and inline tables, keys (bare or quoted, dotted) and table headers. It
/// does not check the syntax: a document it misreads is one TOMLKit refuses with its own message.
struct TOMLOutline {
    /// More keys (each `key = value`, in inline tables too, and each table header) than a file
    /// of every setting has by far.
    static let maximumKeys = 1_000
    /// Dotted parts of one key or table header (`a.b.c` has 3); a setting's key has one.
    static let maximumKeyParts = 8
    /// Arrays and inline tables open at once; a setting's value needs one.
    static let maximumNesting = 32

    /// Why a document is refused, and at which line (1-based).
    struct Refusal: Error, Equatable {
        let line: Int
        let problem: String
    }

    /// The line each top-level key starts on: a key of the root table, or a table header's first part.
    private(set) var keyLines: [String: Int] = [:]

    init(_ text: String) throws(Refusal) {
        var scanner = Scanner(bytes: Array(text.utf8))
        try scanner.run()
        keyLines = scanner.keyLines
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var keyLines: [String: Int] = [:]
        /// The open `[` and `{` of values.
        var open: [UInt8] = []
        var keys = 0
        /// Before the first table header: keys are top-level.
        var inRootTable = true
        /// A key is expected (a statement's start, or after `{` or `,` in an inline table).
        var expectingKey = true
        /// The key being read: its parts so far, its first part, and the line it started on.
        var parts = 0
        var firstPart: [UInt8] = []
        var keyLine = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func run() throws(Refusal) {
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\n"):
                    line += 1
                    index += 1
                    if open.isEmpty { startKey() }
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                    index += 1
                case UInt8(ascii: "#"):
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    if expectingKey { beginPart() }
                    let content = string()
                    if expectingKey && parts == 1 && firstPart.isEmpty { firstPart = content }
                case UInt8(ascii: "[") where expectingKey && open.isEmpty && parts == 0:
                    try header()
                default:
                    if expectingKey { try key(byte) } else { try value(byte) }
                }
            }
        }

        mutating func startKey() {
            expectingKey = true
            parts = 0
            firstPart = []
        }

        /// A part of the key starts here (the first: the key's line).
        mutating func beginPart() {
            if parts == 0 {
                parts = 1
                keyLine = line
            }
        }

        mutating func key(_ byte: UInt8) throws(Refusal) {
            index += 1
            switch byte {
            case UInt8(ascii: "."):
                parts += 1
                if parts > TOMLOutline.maximumKeyParts {
                    throw Refusal(line: line, problem: "a key of more than \(TOMLOutline.maximumKeyParts) dotted parts")
                }
            case UInt8(ascii: "="):
                try countKey()
                if inRootTable && open.isEmpty { record() }
                expectingKey = false
            default:
                beginPart()
                if parts == 1 { firstPart.append(byte) }
            }
        }

        mutating func value(_ byte: UInt8) throws(Refusal) {
            index += 1
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                open.append(byte)
                if open.count > TOMLOutline.maximumNesting {
                    throw Refusal(line: line, problem: "arrays or inline tables nested more than \(TOMLOutline.maximumNesting) deep")
                }
                if byte == UInt8(ascii: "{") { startKey() }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                _ = open.popLast()
            case UInt8(ascii: ","):
                if open.last == UInt8(ascii: "{") { startKey() }
            default:
                break
            }
        }

        /// `[name]` or `[[name]]`: the table's first part is a top-level key.
        mutating func header() throws(Refusal) {
            inRootTable = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "[") { index += 1 }
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "\n") { break }
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\t"):
                    index += 1
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    beginPart()
                    let content = string()
                    if parts == 1 && firstPart.isEmpty { firstPart = content }
                case UInt8(ascii: "."):
                    index += 1
                    parts += 1
                    if parts > TOMLOutline.maximumKeyParts {
                        throw Refusal(line: line, problem: "a table name of more than \(TOMLOutline.maximumKeyParts) dotted parts")
                    }
                default:
                    index += 1
                    beginPart()
                    if parts == 1 { firstPart.append(byte) }
                }
            }
            try countKey()
            record()
            // The rest of the line is `]`, `]]` or a comment; anything else is TOMLKit's to refuse.
            expectingKey = false
        }

        mutating func countKey() throws(Refusal) {
            keys += 1
            if keys > TOMLOutline.maximumKeys {
                throw Refusal(line: line, problem: "more than \(TOMLOutline.maximumKeys) keys, which is no configuration file")
            }
        }

        mutating func record() {
            guard parts > 0 else { return }
            let name = String(decoding: firstPart, as: UTF8.self)
            if keyLines[name] == nil { keyLines[name] = keyLine }
        }

        /// Skips the string at `index` (basic or literal, on one line or several); returns its
        /// bytes as written (escapes left as they are: a key that needs one is no setting).
        mutating func string() -> [UInt8] {
            let quote = bytes[index]
            let basic = quote == UInt8(ascii: "\"")
            let multiline = index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote
            index += multiline ? 3 : 1
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") {
                    // A single-line string never crosses a line: unclosed, it is TOMLKit's to refuse.
                    guard multiline else { return Array(bytes[start..<index]) }
                    line += 1
                } else if basic && byte == UInt8(ascii: "\\") {
                    index += 1
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\n") { line += 1 }
                } else if byte == quote {
                    if !multiline {
                        index += 1
                        return Array(bytes[start..<(index - 1)])
                    }
                    if index + 2 < bytes.count, bytes[index + 1] == quote, bytes[index + 2] == quote {
                        // Up to two more quotes are the string's own last characters.
                        var end = index + 3
                        while end < bytes.count, end < index + 5, bytes[end] == quote { end += 1 }
                        let content = Array(bytes[start..<(end - 3)])
                        index = end
                        return content
                    }
                }
                index += 1
            }
            return Array(bytes[start..<bytes.count])
        }
    }
}

/// One tokenized request line: the command name and its arguments, quotes and escapes removed.
///
/// Tokenizing follows mpd's `Tokenizer`: the name is a word starting with a lower-case
/// letter; arguments are bare words or double-quoted strings in which `\x` stands for `x`
/// (so `\"` and `\\` work). Bytes above 0x7F are passed through, so UTF-8 arrives intact.
public struct Request: Hashable, Sendable {
    /// The command name, e.g. `play`. Not yet checked against the command table.
    public var name: String
    /// The arguments in order, unquoted and unescaped.
    public var arguments: [String]

    /// Creates a request directly, e.g. for tests or for parsing with ``Command/init(_:)``.
    public init(name: String, arguments: [String] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// mpd refuses a request with this many arguments or more (`COMMAND_ARGV_MAX`, 2 + 2 × 31 tag types).
    public static let argumentLimit = 64

    /// Tokenizes one request line given as bytes, without its `\n`.
    ///
    /// Trailing whitespace, including a `\r`, is ignored; so is anything from a NUL byte on
    /// (mpd works on C strings). See ``RequestParseError`` for the three ways this can fail.
    public static func parse(_ line: some Collection<UInt8>) throws(RequestParseError) -> Request {
        try RequestTokenizer.request(line)
    }

    /// Tokenizes one request line given as text, without its `\n`.
    public static func parse(_ line: String) throws(RequestParseError) -> Request {
        try parse(line.utf8)
    }
}

/// Why a request line could not be tokenized. Each case needs different handling, as in mpd.
public enum RequestParseError: Error, Hashable, Sendable {
    /// Not the MPD protocol at all: an empty or blank line, or a line that does not start with a
    /// lower-case letter (`STATUS`, `Ping`). mpd closes the connection without replying.
    case malformed
    /// The command name contains a character that is not a letter, digit or `_` (`ping!`).
    /// mpd sends the ACK (code 5, `{}`) and then closes the connection.
    case invalidCommandName(MPDError)
    /// An argument could not be tokenized (`Missing closing '"'`, `Invalid unquoted character`,
    /// `Space expected after closing '"'`, `Too many arguments`). mpd sends the ACK and keeps the
    /// connection open.
    case invalidArgument(MPDError)
}

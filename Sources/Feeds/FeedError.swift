/// Why a feed could not be read. Each case says enough for one log line a user can act on.
public enum FeedError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The body is larger than the parser accepts; nothing of it was parsed.
    case bodyTooLarge(limit: Int)
    /// The body is an HTML page (a captive portal, an error page, a moved site), not a feed.
    case htmlPage
    /// The document type declaration carries an internal subset (entity declarations):
    /// refused before parsing, since feeds never need one and entities are the means of
    /// entity-expansion ("billion laughs") and external-entity attacks.
    case documentTypeNotAllowed(reason: String)
    /// UTF-32 or EBCDIC: no feed uses them, and the prologue check cannot read them.
    case unsupportedEncoding(String)
    /// Not well-formed XML: where the parser stopped and why.
    case malformed(line: Int, column: Int, reason: String)
    /// Well-formed XML whose root is neither RSS `<rss>` nor Atom `<feed>`.
    case notAFeed(rootElement: String)
    /// No body to read: the server could not be reached, answered with an HTTP error, or
    /// took too long. The reason is the fetcher's one-line account of it.
    case fetchFailed(String)

    public var description: String {
        switch self {
        case .bodyTooLarge(let limit):
            "the feed is larger than \(limit) bytes"
        case .htmlPage:
            "not a feed: the server sent an HTML page"
        case .documentTypeNotAllowed(let reason):
            "refused document type declaration: \(reason)"
        case .unsupportedEncoding(let encoding):
            "unsupported encoding \(encoding)"
        case .malformed(let line, let column, let reason):
            "not well-formed XML at line \(line), column \(column): \(reason)"
        case .notAFeed(let root):
            "not a feed: the root element is <\(root)>, neither RSS <rss> nor Atom <feed>"
        case .fetchFailed(let reason):
            reason
        }
    }
}

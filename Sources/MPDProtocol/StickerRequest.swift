/// A `sticker` command's arguments, typed (MPD's `StickerCommands.cxx`).
///
/// ``Command/sticker(_:)`` carries the raw arguments and the daemon parses them with
/// ``parse(_:)`` only after it has checked that it keeps stickers at all, because mpd says
/// `sticker database is disabled` before it looks at any argument; the arity (at least three)
/// is the command table's. The errors are mpd 0.23's, in its order: `unknown sticker domain`
/// for a type other than `song`, then `bad request` for a sub-command it does not know or a
/// wrong count, then `bad operator` for a `find` comparison other than `=`, `<` and `>`.
///
/// `find` also takes mpd 0.24's `sort uri|value|value_int` (`-` before the key: descending)
/// and `window START:END` at its end, which mpd 0.23 would have refused as a bad operator.
public enum StickerRequest: Hashable, Sendable {
    /// `sticker get song URI NAME`.
    case get(uri: String, name: String)
    /// `sticker set song URI NAME VALUE`.
    case set(uri: String, name: String, value: String)
    /// `sticker delete song URI [NAME]`: one sticker, or (nil) all of the song's.
    case delete(uri: String, name: String?)
    /// `sticker list song URI`.
    case list(uri: String)
    /// `sticker find song DIRECTORY NAME [OP VALUE] [sort KEY] [window START:END]`.
    case find(StickerQuery)

    /// The object type mpd 0.23 has stickers for.
    public static let songType = "song"

    /// Parses `arguments` (the sub-command first, then the type): at least three of them.
    public static func parse(_ arguments: [String]) throws(MPDError) -> StickerRequest {
        precondition(arguments.count >= 3, "the command table asks for three arguments")
        guard arguments[1] == songType else { throw error(.argument, "unknown sticker domain") }
        let uri = arguments[2]
        switch (arguments[0], arguments.count) {
        case ("get", 4): return .get(uri: uri, name: arguments[3])
        case ("list", 3): return .list(uri: uri)
        case ("set", 5): return .set(uri: uri, name: arguments[3], value: arguments[4])
        case ("delete", 3), ("delete", 4): return .delete(uri: uri, name: arguments.count == 4 ? arguments[3] : nil)
        case ("find", 4...): return .find(try query(arguments))
        default: throw error(.argument, "bad request")
        }
    }

    /// `find`'s arguments: mpd 0.24's `window` (last) and `sort` (before it) taken off the
    /// end, then what mpd 0.23 reads: a name alone, or a name, an operator and a value.
    private static func query(_ arguments: [String]) throws(MPDError) -> StickerQuery {
        var arguments = arguments[...]
        var window: PositionRange?
        if arguments.count >= 6, arguments[arguments.endIndex - 2] == "window" {
            window = try ArgumentParsing(command: Command.Kind.sticker.name).range(arguments[arguments.endIndex - 1])
            arguments = arguments.dropLast(2)
        }
        var sort: StickerQuery.Sort?
        if arguments.count >= 6, arguments[arguments.endIndex - 2] == "sort" {
            let text = arguments[arguments.endIndex - 1]
            let descending = text.hasPrefix("-")
            guard let key = StickerQuery.SortKey(rawValue: descending ? String(text.dropFirst()) : text) else {
                throw error(.argument, "Unknown sort tag \"\(descending ? String(text.dropFirst()) : text)\"")
            }
            sort = StickerQuery.Sort(key: key, descending: descending)
            arguments = arguments.dropLast(2)
        }
        let base = arguments[arguments.startIndex + 2], name = arguments[arguments.startIndex + 3]
        switch arguments.count {
        case 4:
            return StickerQuery(directory: base, name: name, sort: sort, window: window)
        case 6:
            guard let comparison = StickerQuery.Comparison(rawValue: arguments[arguments.startIndex + 4]) else {
                throw error(.argument, "bad operator")
            }
            return StickerQuery(directory: base, name: name, match: StickerQuery.Match(comparison, arguments[arguments.startIndex + 5]),
                                sort: sort, window: window)
        default:
            throw error(.argument, "bad request")
        }
    }

    private static func error(_ code: ACKCode, _ message: String) -> MPDError {
        MPDError(code, message, command: Command.Kind.sticker.name)
    }
}

/// What `sticker find` looks for: the songs at or below a directory that have a sticker of a
/// name, optionally with a value compared as text (SQLite's, byte by byte, as mpd compares).
public struct StickerQuery: Hashable, Sendable {
    /// `=`, `<` and `>`: mpd 0.23's operators, comparing the values as strings.
    public enum Comparison: String, Hashable, Sendable {
        case equal = "="
        case less = "<"
        case greater = ">"
    }

    /// mpd 0.24's sort keys: the URI, the value as text, or the value's leading integer.
    public enum SortKey: String, Hashable, Sendable {
        case uri
        case value
        case valueInt = "value_int"
    }

    public struct Sort: Hashable, Sendable {
        public var key: SortKey
        public var descending: Bool

        public init(key: SortKey, descending: Bool = false) {
            self.key = key
            self.descending = descending
        }
    }

    /// A value compared with each sticker's.
    public struct Match: Hashable, Sendable {
        public var comparison: Comparison
        public var value: String

        public init(_ comparison: Comparison, _ value: String) {
            self.comparison = comparison
            self.value = value
        }
    }

    /// The directory, as given: `""` is the whole library; otherwise the songs whose URI starts
    /// with it and a `/` (mpd's prefix: `dir/` itself finds nothing).
    public var directory: String
    public var name: String
    /// `OP VALUE`; nil: any value.
    public var match: Match?
    public var sort: Sort?
    public var window: PositionRange?

    public init(directory: String, name: String, match: Match? = nil, sort: Sort? = nil, window: PositionRange? = nil) {
        self.directory = directory
        self.name = name
        self.match = match
        self.sort = sort
        self.window = window
    }

    /// The prefix every URI found starts with.
    public var uriPrefix: String { directory.isEmpty ? "" : directory + "/" }
}

/// The body of a successful reply: ordered `key: value` lines, without the final `OK`.
///
/// Tag lines are kept apart from other lines so that each client's `tagtypes` selection can
/// be applied when the session renders the reply; an executor always adds every tag it has.
/// Keys and values are written as given (mpd's spelling matters: `Artist`, not `artist`);
/// line breaks inside them are replaced by spaces so they cannot break the framing.
public struct Reply: Hashable, Sendable {
    /// One line of a reply body.
    public enum Line: Hashable, Sendable {
        /// A plain `key: value` line, always sent.
        case field(key: String, value: String)
        /// A tag line (`Artist: ...`), sent only if the client has the tag enabled.
        case tag(TagType, String)
        /// A song block rendered beforehand (its tag lines filtered like the others).
        case block(SongBlock)
    }

    /// The lines in the order they will be sent.
    public private(set) var lines: [Line]
    /// The payload of a binary reply (`albumart`, `readpicture`): sent after the lines as
    /// `binary: N`, the N bytes, and a newline, as MPD's `Response::WriteBinary`.
    public private(set) var binary: [UInt8]?
    /// The permissions an accepted `password` gives the client from now on (mpd's
    /// `Client::SetPermission`): the session takes them when the reply comes back.
    public private(set) var grantedPermissions: Permission?
    /// Whether the session closes the connection after this reply's lines, without an `OK`
    /// (`kill`, MPD's `CommandResult::KILL`); nothing the client sent after it is run.
    public private(set) var closesConnection = false

    /// An empty body: the reply is just `OK`.
    public init() {
        lines = []
    }


    /// An empty body, for commands that only act (`play`, `add`, ...).
    public static let empty = Reply()

    /// Appends `key: value`.
    public mutating func append(_ key: String, _ value: String) {
        lines.append(.field(key: key, value: value))
    }

    /// Appends `key: value` for an integer value.
    public mutating func append(_ key: String, _ value: Int) {
        append(key, String(value))
    }

    /// Appends `key: value` with the value in seconds and three decimals, as mpd writes
    /// `elapsed` and `duration` (`30.040`).
    public mutating func append(_ key: String, seconds: Double) {
        append(key, ProtocolFormatting.seconds(seconds))
    }

    /// Appends a tag line; it is filtered by the client's `tagtypes` selection.
    public mutating func append(_ tag: TagType, _ value: String) {
        lines.append(.tag(tag, value))
    }

    /// Appends a song block as `currentsong` and `playlistinfo` send it.
    public mutating func append(_ song: SongInfo) {
        song.appendLines(to: &self)
    }

    /// Appends a song block rendered beforehand.
    public mutating func append(_ block: SongBlock) {
        lines.append(.block(block))
    }

    /// Makes this a binary reply carrying `bytes` (at most the client's `binarylimit`).
    public mutating func setBinary(_ bytes: [UInt8]) {
        binary = bytes
    }

    /// Makes this the reply of an accepted password: the client holds `permissions` from now on.
    public mutating func grant(_ permissions: Permission) {
        grantedPermissions = permissions
    }

    /// Makes this the last reply on the connection: no `OK` follows, the connection closes.
    public mutating func closeConnection() {
        closesConnection = true
    }

    /// Appends all lines of another reply.
    public mutating func append(contentsOf other: Reply) {
        lines.append(contentsOf: other.lines)
    }

    /// The body as sent on the wire, each line ending in `\n`, keeping only enabled tags.
    public func rendered(tagTypes: Set<TagType> = Set(TagType.allCases)) -> String {
        var text = ""
        let everyTag = tagTypes.count == TagType.allCases.count
        for line in lines {
            switch line {
            case .field(let key, let value):
                Self.write(ProtocolText.singleLine(key), ProtocolText.singleLine(value), to: &text)
            case .tag(let tag, let value) where tagTypes.contains(tag):
                Self.write(tag.protocolName, ProtocolText.singleLine(value), to: &text)
            case .tag:
                continue
            case .block(let block):
                text += block.rendered(tagTypes: tagTypes, everyTag: everyTag)
            }
        }
        return text
    }

    /// Appends `key: value\n` piece by piece (no interpolation: no temporary string per line).
    private static func write(_ key: String, _ value: String, to text: inout String) {
        text += key
        text += ": "
        text += value
        text += "\n"
    }
}

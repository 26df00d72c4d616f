/// What a song block says about one song, in the order mpd sends the lines:
/// `file`, `Range`, `Last-Modified`, `Format`, tags, `Time`, `duration`, `Pos`, `Id`.
///
/// `playlistinfo` sends these blocks back to back; clients split them at `file:`.
public struct SongInfo: Hashable, Sendable {
    /// One tag value of the song. Codable as `{"type": "Artist", "value": "..."}`, the form
    /// the daemon's saved database keeps its songs' tags in.
    public struct Tag: Hashable, Sendable, Codable {
        public var type: TagType
        public var value: String

        /// A tag value, e.g. `.init(.artist, "Test Artist")`.
        public init(_ type: TagType, _ value: String) {
            self.type = type
            self.value = value
        }
    }

    /// The URI relative to the music directory (`file: track1.mp3`).
    public var file: String
    /// The part of the song that plays (`Range: 1.000-5.000`), for a queue entry given one.
    public var range: SongTimeRange?
    /// The file's modification time as Unix seconds (`Last-Modified: 2026-11-22T06:30:35Z`).
    public var lastModified: Int64?
    /// The audio format, `rate:bits:channels` (`Format: 44100:24:2`).
    public var format: String?
    /// Tags in the order to send them; a type may repeat (two `Artist` lines).
    public var tags: [Tag]
    /// The length in seconds; gives `Time: 30` (rounded) and `duration: 30.040`.
    public var duration: Double?
    /// The queue position (`Pos: 0`), for queue entries.
    public var position: Int?
    /// The queue id (`Id: 1`), for queue entries.
    public var id: Int?
    /// The queue priority (`Prio: 5`), shown when not 0.
    public var priority: Int = 0

    /// Describes a song; leave out what is unknown and it is left out of the block.
    public init(
        file: String, lastModified: Int64? = nil, format: String? = nil, tags: [Tag] = [],
        duration: Double? = nil, position: Int? = nil, id: Int? = nil
    ) {
        self.file = file
        self.lastModified = lastModified
        self.format = format
        self.tags = tags
        self.duration = duration
        self.position = position
        self.id = id
    }

    func appendLines(to reply: inout Reply) {
        reply.append("file", file)
        if let text = range?.protocolText { reply.append("Range", text) }
        if let lastModified { reply.append("Last-Modified", ProtocolFormatting.timestamp(unixSeconds: lastModified)) }
        if let format { reply.append("Format", format) }
        for tag in tags { reply.append(tag.type, tag.value) }
        if let duration {
            reply.append("Time", ProtocolFormatting.wholeSeconds(duration))
            reply.append("duration", seconds: duration)
        }
        if let position { reply.append("Pos", position) }
        if let id { reply.append("Id", id) }
        if priority != 0 { reply.append("Prio", priority) }
    }
}

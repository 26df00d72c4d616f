/// `find`/`search`'s `sort TAG` (`-TAG`: descending; `Last-Modified` by time).
public struct SongOrder: Hashable, Sendable {
    public enum Key: Hashable, Sendable {
        case tag(TagType)
        case lastModified
    }

    public var key: Key
    public var descending: Bool

    public init(key: Key, descending: Bool) {
        self.key = key
        self.descending = descending
    }

    static func parse(_ text: String) throws(MPDError) -> SongOrder {
        let descending = text.hasPrefix("-")
        let name = descending ? String(text.dropFirst()) : text
        if ASCII.equalsIgnoringCase(name, "Last-Modified") { return SongOrder(key: .lastModified, descending: descending) }
        guard let type = TagType(protocolName: name) else { throw MPDError(.argument, "Unknown sort tag") }
        return SongOrder(key: .tag(type), descending: descending)
    }
}

/// A song block rendered once, for the songs of the library that `search`, `find` and
/// `listallinfo` send by the thousand.
///
/// Rendering a block means formatting its date, length and every line (a dozen strings
/// per song); a search that matches 3,000 songs did that 3,000 times per command. The
/// library's songs change only when the database does, so the daemon renders each block
/// once per database and a reply copies the text. A client that narrowed `tagtypes` gets
/// the block rendered anew from ``info`` with its own selection.
///
/// A final class so that a reply holds a reference, not a copy; immutable, so `Sendable`.
public final class SongBlock: Sendable, Hashable {
    /// The song as a ``SongInfo`` (no queue fields).
    public let info: SongInfo
    /// The block with every tag, each line ending in `\n`.
    public let text: String

    public init(_ info: SongInfo) {
        self.info = info
        var reply = Reply()
        reply.append(info)
        text = reply.rendered()
    }

    /// The block as a client with the tag selection `tagTypes` gets it.
    func rendered(tagTypes: Set<TagType>, everyTag: Bool) -> String {
        if everyTag { return text }
        var reply = Reply()
        reply.append(info)
        return reply.rendered(tagTypes: tagTypes)
    }

    public static func == (lhs: SongBlock, rhs: SongBlock) -> Bool { lhs.info == rhs.info }

    public func hash(into hasher: inout Hasher) { hasher.combine(info) }
}

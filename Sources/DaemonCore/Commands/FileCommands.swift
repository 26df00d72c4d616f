#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import QueuePlayer

/// What a song file says of itself beyond its tags (MPD's `FileCommands.cxx`): `readcomments`,
/// the comment pairs of its ID3v2 tag (``ID3TagMapping/comments(of:)``). `listfiles` is the
/// library's (``LibraryCommands``), the pictures are ``PictureCommands``'.
///
/// As MPD, the song must be in the database (`No such song` otherwise) and its file is read
/// for each request: the pairs are not kept in the database.
struct FileCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .readcomments,
    ]

    let library: MusicLibrary
    /// The database a song must be in.
    let updater: LibraryUpdater

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        guard case .readcomments(let uri) = command else { return nil }
        guard updater.database.records[uri] != nil, let path = library.path(of: uri) else {
            throw MPDError.noSuchSong
        }
        let file = path.resolvingSymlinksInPath().standardizedFileURL
        guard library.contains(file) else { throw MPDError.noSuchSong }
        let decoder: MPG123Decoder
        do {
            decoder = try MPG123Decoder(url: file)
        } catch {
            throw MPDError(.noExist, "Failed to load file")
        }
        var reply = Reply()
        for (name, value) in ID3TagMapping.comments(of: decoder.id3) { reply.append(name, value) }
        return reply
    }
}

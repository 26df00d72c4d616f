#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol

/// Stored playlists (MPD's `PlaylistCommands.cxx`) over ``StoredPlaylists``.
struct PlaylistCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .save, .load, .listplaylists, .listplaylist, .listplaylistinfo, .playlistadd, .playlistclear,
        .playlistdelete, .playlistmove, .rename, .rm,
    ]

    /// The partition's queue (`save`, `load`).
    let queue: any QueueInserting
    let playlists: StoredPlaylists
    /// Playlists named by URL, fetched before the command ran.
    let remotePlaylists: RemotePlaylists
    /// Where playlist entries are found, and their details.
    let library: MusicLibrary
    let songIndex: SongIndex
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let queue = queue
        var reply = Reply()
        switch command {
        case .save(let name, let mode):
            try playlists.save(queue.playQueue.entries.map(\.song.uri), as: name, mode: mode)
        case .load(let name, let range, let position):
            let uris = try songs(in: name, context: context)
            let window = try range.positionsForListing(queueLength: uris.count)
            let files = uris[window].compactMap(resolve)
            let at = try position?.insertionIndex(queueLength: queue.playQueue.count, current: queue.selectedPosition)
            queue.insert(files, at: at)
            return reply
        case .listplaylists:
            for info in try playlists.list() {
                reply.append("playlist", info.name)
                reply.append("Last-Modified", ProtocolFormatting.timestamp(unixSeconds: Int64(info.lastModified.timeIntervalSince1970)))
            }
            return reply
        case .listplaylist(let name, let range):
            let uris = try songs(in: name, context: context)
            for uri in uris[try range.positionsForListing(queueLength: uris.count)] { reply.append("file", uri) }
            return reply
        case .listplaylistinfo(let name, let range):
            let uris = try songs(in: name, context: context)
            for uri in uris[try range.positionsForListing(queueLength: uris.count)] {
                if !StreamURL.hasScheme(uri), let file = library.files(for: uri)?.first {
                    reply.append(QueuedSong(url: file, library: library, index: songIndex).info)
                } else {
                    reply.append("file", uri)
                }
            }
            return reply
        case .playlistadd(let name, let uri, let position) where StreamURL.hasScheme(uri):
            try playlists.add([try StreamURL.parse(uri).absoluteString], to: name, at: position)
        case .playlistadd(let name, let uri, let position):
            guard let files = library.files(for: uri), !files.isEmpty else {
                throw MPDError(.noExist, "No such directory")
            }
            try playlists.add(files.map(library.uri(for:)), to: name, at: position)
        case .playlistclear(let name):
            try playlists.clear(name)
        case .playlistdelete(let name, let range):
            let count = try playlists.songs(in: name).count
            try playlists.delete(try range.positionsForDeletion(queueLength: count), from: name)
        case .playlistmove(let name, let range, let destination):
            let count = try playlists.songs(in: name).count
            try playlists.move(try range.positionsForDeletion(queueLength: count), to: destination, in: name)
        case .rename(let name, let newName):
            try playlists.rename(name, to: newName)
        case .rm(let name):
            try playlists.remove(name)
        default:
            return nil
        }
        events.post([.storedPlaylist])
        return reply
    }

    /// The URIs of a stored playlist, or of a remote one (`NAME` is a URL: fetched by the
    /// connection before this command ran, ``RemotePlaylists``).
    private func songs(in name: String, context: CommandContext) throws(MPDError) -> [String] {
        guard StreamURL.hasScheme(name) else { return try playlists.songs(in: name) }
        return try remotePlaylists.take(name, for: context.clientID).entries.map(\.absoluteString)
    }

    /// What a playlist entry plays: a stream URL, or a file of the music directory.
    private func resolve(_ uri: String) -> URL? {
        StreamURL.hasScheme(uri) ? try? StreamURL.parse(uri) : library.files(for: uri)?.first
    }
}

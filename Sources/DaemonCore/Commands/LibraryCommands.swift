import Foundation
import MPDProtocol

/// The music database (MPD's `DatabaseCommands.cxx`, `FileCommands.cxx`, `OtherCommands.cxx`):
/// browsing, searching (and `searchaddpl`: what is found into a stored playlist), listing tag
/// values, counting, and keeping it up to date.
struct LibraryCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .update, .rescan, .config, .lsinfo, .listall, .listallinfo, .listfiles, .list, .find, .search,
        .searchaddpl, .findadd, .searchadd, .count, .stats, .urlhandlers, .decoders,
    ]

    /// The partition's queue (`findadd`, `searchadd`) and its times (`stats`).
    let queue: any QueueInserting & PlayStatistics
    let library: MusicLibrary
    let updater: LibraryUpdater
    let storedPlaylists: StoredPlaylists
    /// The life cycle an `update` runs as a background task of.
    let application: any ApplicationContext
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let queue = queue
        let database = updater.database
        var reply = Reply()
        switch command {
        case .update(let uri), .rescan(let uri):
            let rereadAll: Bool
            if case .rescan = command { rereadAll = true } else { rereadAll = false }
            reply.append("updating_db", try updater.start(in: application, uri: uri, rereadAll: rereadAll))
        case .config:
            // Checked after the permission (admin), as mpd's handler does.
            guard context.isLocal else { throw MPDError(.permission, "Command only permitted to local clients") }
            reply.append("music_directory", library.root.path)
        case .lsinfo(let uri):
            guard let listing = database.listing(of: uri) else { throw MPDError(.noExist, "No such directory") }
            for directory in listing.directories {
                reply.append("directory", directory.uri)
                reply.append("Last-Modified", ProtocolFormatting.timestamp(unixSeconds: directory.modified))
            }
            for song in listing.songs { reply.append(song.info) }
            if SongDatabase.trimmed(uri).isEmpty {
                // At the root, mpd also shows the stored playlists.
                for playlist in (try? storedPlaylists.list()) ?? [] {
                    reply.append("playlist", playlist.name)
                    reply.append("Last-Modified", ProtocolFormatting.timestamp(unixSeconds: Int64(playlist.lastModified.timeIntervalSince1970)))
                }
            }
        case .listall(let uri), .listallinfo(let uri):
            let (songs, blocks) = (updater.songsInOrder, updater.blocksInOrder)
            guard let found = Self.indices(of: songs, under: uri, in: database) else { throw MPDError(.noExist, "No such directory") }
            let withInfo: Bool
            if case .listallinfo = command { withInfo = true } else { withInfo = false }
            var shown = Set<String>()
            let base = SongDatabase.trimmed(uri)
            for index in found {
                let song = songs[index]
                // Every directory on the way to the song, once, before its first song.
                var path = ""
                for component in song.uri.split(separator: "/").dropLast() {
                    path = path.isEmpty ? String(component) : path + "/" + component
                    guard path.count > base.count, shown.insert(path).inserted else { continue }
                    reply.append("directory", path)
                }
                if withInfo { reply.append(blocks[index]) } else { reply.append("file", song.uri) }
            }
        case .listfiles(let uri):
            try listFiles(uri, into: &reply)
        case .list(let key, let filter, let groups):
            var previous: [String]?
            for row in updater.distinctValues(of: key, filter: filter, groups: groups) {
                // A group value is printed where it changes, as mpd prints them.
                let kept = previous.map { zip($0.prefix(groups.count), row.prefix(groups.count)).prefix { $0 == $1 }.count } ?? 0
                for index in kept..<row.count {
                    reply.append(index < groups.count ? groups[index].protocolName : key.protocolName, row[index])
                }
                previous = row
            }
        case .find(let filter, let sort, let window), .search(let filter, let sort, let window):
            let blocks = updater.blocksInOrder
            for index in try matches(filter, sort: sort, window: window) { reply.append(blocks[index]) }
        case .searchaddpl(let name, let filter, let sort, let window, let position):
            let songs = updater.songsInOrder
            let uris = try matches(filter, sort: sort, window: window).map { songs[$0].uri }
            let playlists = storedPlaylists
            guard !uris.isEmpty else {
                // MPD writes the playlist only when a song goes into it; with a position, it
                // opens the playlist first, so the name and the position are checked anyway.
                if let position, position > (try playlists.countOfSongs(in: name)) { throw MPDError(.argument, "Bad position") }
                return reply
            }
            try playlists.add(uris, to: name, at: position)
            events.post([.storedPlaylist])
        case .findadd(let filter, let position), .searchadd(let filter, let position):
            let files = updater.songsInOrder.filter(filter.matches).map { library.root.appendingPathComponent($0.uri) }
            let at = try position?.insertionIndex(queueLength: queue.playQueue.count, current: queue.selectedPosition)
            queue.insert(files, at: at)
        case .count(let filter, let group):
            let songs = updater.songsInOrder.filter { filter?.matches($0) ?? true }
            if let group {
                let groups = Dictionary(grouping: songs) { $0.values(of: group).first ?? "" }
                for value in groups.keys.sorted() {
                    reply.append(group.protocolName, value)
                    Self.appendCount(groups[value]!, to: &reply)
                }
            } else {
                Self.appendCount(songs, to: &reply)
            }
        case .stats:
            let songs = database.records.values
            reply.append("artists", Set(songs.flatMap { $0.tags.filter { $0.type == .artist }.map(\.value) }).count)
            reply.append("albums", Set(songs.flatMap { $0.tags.filter { $0.type == .album }.map(\.value) }).count)
            reply.append("songs", songs.count)
            reply.append("uptime", queue.uptime)
            reply.append("db_playtime", Int(songs.reduce(0) { $0 + ($1.duration ?? 0) }.rounded()))
            reply.append("db_update", Int(database.updated))
            // Whole seconds, cut as mpd's duration_cast cuts them.
            reply.append("playtime", Int(queue.playedSeconds))
        case .urlhandlers:
            for scheme in StreamURL.schemes { reply.append("handler", "\(scheme)://") }
        case .decoders:
            reply.append("plugin", "mpg123")
            reply.append("suffix", "mp3")
            reply.append("mime_type", "audio/mpeg")
        default:
            return nil
        }
        return reply
    }

    /// The positions in `songs` (the database's songs in order) of those at or under `uri`
    /// (`""`: all); nil if `uri` names no song and no directory.
    private static func indices(of songs: [SongDatabase.Record], under uri: String, in database: SongDatabase) -> [Int]? {
        let trimmed = SongDatabase.trimmed(uri)
        if trimmed.isEmpty { return Array(songs.indices) }
        if database.records[trimmed] != nil { return songs.indices.filter { songs[$0].uri == trimmed } }
        let prefix = trimmed + "/"
        let found = songs.indices.filter { songs[$0].uri.hasPrefix(prefix) }
        return found.isEmpty ? nil : found
    }

    private static func appendCount(_ songs: [SongDatabase.Record], to reply: inout Reply) {
        reply.append("songs", songs.count)
        reply.append("playtime", Int(songs.reduce(0) { $0 + ($1.duration ?? 0) }.rounded()))
    }

    /// The indices in ``LibraryUpdater/songsInOrder`` of the songs `filter` matches, sorted and
    /// windowed as `find` and `search` ask.
    private func matches(_ filter: SongFilter, sort: SongOrder?, window: PositionRange?) throws(MPDError) -> [Int] {
        let songs = updater.songsInOrder
        var found = songs.indices.filter { filter.matches(songs[$0]) }
        if let sort { found.sort { Self.precedes(songs[$0], songs[$1], sort) } }
        if let window { found = Array(found[try window.positionsForListing(queueLength: found.count)]) }
        return found
    }

    private static func precedes(_ a: SongDatabase.Record, _ b: SongDatabase.Record, _ order: SongOrder) -> Bool {
        let ascending: Bool
        switch order.key {
        case .lastModified:
            if a.modified == b.modified { return false }
            ascending = a.modified < b.modified
        case .tag(let type):
            let (x, y) = (a.values(of: .tag(type)).first ?? "", b.values(of: .tag(type)).first ?? "")
            if x == y { return false }
            ascending = x.compare(y, options: [.numeric, .caseInsensitive]) == .orderedAscending
        }
        return order.descending ? !ascending : ascending
    }

    /// `listfiles`: what the file system holds in a directory of the music directory, songs or not.
    private func listFiles(_ uri: String, into reply: inout Reply) throws(MPDError) {
        let library = library
        let relative = SongDatabase.trimmed(uri)
        guard SongFilter.isSafeRelativeURI(relative) else { throw MPDError(.noExist, "No such directory") }
        let directory = library.root.appendingPathComponent(relative).resolvingSymlinksInPath().standardizedFileURL
        guard directory.path == library.root.path || directory.path.hasPrefix(library.root.path + "/"),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw MPDError(.noExist, "No such directory")
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            var info = stat()
            guard lstat(directory.appendingPathComponent(name).path, &info) == 0 else { continue }
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR {
                reply.append("directory", name)
            } else if type == S_IFREG {
                reply.append("file", name)
                reply.append("size", Int(info.st_size))
            } else {
                continue
            }
            reply.append("Last-Modified", ProtocolFormatting.timestamp(unixSeconds: Int64(info.st_mtim.tv_sec)))
        }
    }
}

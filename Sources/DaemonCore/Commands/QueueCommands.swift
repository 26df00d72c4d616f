#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol

/// The queue: adding, removing, moving, priorities, ranges, and reading it back by position,
/// id or version (MPD's `QueueCommands.cxx`), and its songs' tags (`TagCommands.cxx`).
struct QueueCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .add, .addid, .clear, .delete, .deleteid, .move, .moveid, .swap, .swapid, .shuffle, .prio, .prioid,
        .playlistinfo, .playlistid, .plchanges, .plchangesposid, .playlistfind, .playlistsearch, .playlist,
        .rangeid, .addtagid, .cleartagid,
    ]

    /// The partition's queue.
    let queue: any QueueEditing
    /// Where `add` finds files.
    let library: MusicLibrary

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        let queue = queue
        let playQueue = queue.playQueue
        switch command {
        case .add(let uri, let position):
            let files = try files(uri, orError: .noSuchDirectory)
            queue.insert(files, at: try position?.insertionIndex(queueLength: playQueue.count, current: queue.selectedPosition))
        case .addid(let uri, let position):
            let files = try files(uri, orError: MPDError(.noExist, "No such song"))
            guard files.count == 1 else { throw MPDError(.noExist, "No such song") }
            let at = try position?.insertionIndex(queueLength: playQueue.count, current: queue.selectedPosition)
            var reply = Reply()
            reply.append("Id", queue.insert(files, at: at)[0])
            return reply
        case .clear:
            queue.clear()
        case .delete(let range):
            queue.remove(try range.positionsForDeletion(queueLength: playQueue.count))
        case .deleteid(let id):
            let position = try queue.position(ofID: id)
            queue.remove(position..<position + 1)
        case .move(let range, let destination):
            let moving = try range.positionsForDeletion(queueLength: playQueue.count)
            let to = try destination.moveDestination(queueLength: playQueue.count, current: queue.selectedPosition, moving: moving)
            try queue.edit { queue throws(MPDError) in queue.move(moving, to: to) }
        case .moveid(let id, let destination):
            let from = try queue.position(ofID: id)
            let to = try destination.moveDestination(queueLength: playQueue.count, current: queue.selectedPosition,
                                                     moving: from..<from + 1)
            try queue.edit { queue throws(MPDError) in queue.move(from..<from + 1, to: to) }
        case .swap(let first, let second):
            guard first < playQueue.count, second < playQueue.count else { throw MPDError.badSongIndex }
            try queue.edit { queue throws(MPDError) in queue.swapAt(first, second) }
        case .swapid(let first, let second):
            let (a, b) = (try queue.position(ofID: first), try queue.position(ofID: second))
            try queue.edit { queue throws(MPDError) in queue.swapAt(a, b) }
        case .shuffle(let range):
            let positions = try range.positionsForListing(queueLength: playQueue.count)
            try queue.edit { queue throws(MPDError) in queue.shuffle(positions) }
        case .prio(let priority, let ranges):
            let resolved = try ranges.map { range throws(MPDError) in try range.positionsForListing(queueLength: playQueue.count) }
            try queue.edit { queue throws(MPDError) in
                for positions in resolved { queue.setPriority(priority, for: positions) }
            }
        case .prioid(let priority, let ids):
            let positions = try ids.map { id throws(MPDError) in try queue.position(ofID: id) }
            try queue.edit { queue throws(MPDError) in
                for position in positions { queue.setPriority(priority, for: position..<position + 1) }
            }
        case .playlistinfo(let range):
            return songs(try range.positionsForListing(queueLength: playQueue.count))
        case .playlistid(let id):
            guard let id else { return songs(0..<playQueue.count) }
            let position = try queue.position(ofID: id)
            return songs(position..<position + 1)
        case .plchanges(let version, let range):
            let window = try range.positionsForListing(queueLength: playQueue.count)
            return songs(playQueue.changes(since: version).filter(window.contains))
        case .plchangesposid(let version, let range):
            let window = try range.positionsForListing(queueLength: playQueue.count)
            var reply = Reply()
            for position in playQueue.changes(since: version) where window.contains(position) {
                reply.append("cpos", position)
                reply.append("Id", playQueue.entries[position].id)
            }
            return reply
        case .playlistfind(let filter), .playlistsearch(let filter):
            return songs(playQueue.entries.indices.filter { filter.matches(playQueue.entries[$0].song) })
        case .playlist:
            // The old format (MPD's `queue_print_uris`): `POS:file: URI`.
            var reply = Reply()
            for (position, entry) in playQueue.entries.enumerated() { reply.append("\(position):file", entry.song.uri) }
            return reply
        case .rangeid(let id, let range):
            try queue.setRange(range, ofID: id)
        case .addtagid(let id, let name, let value):
            // A tag mpd knows but does not enable (`Comment`) is accepted and kept nowhere, as
            // mpd's `TagBuilder` drops the tags it does not enable; so is an empty value.
            let type = TagType(rawValue: name)
            try queue.editTags(ofID: id) { tags in
                if let type, !value.isEmpty { tags.append(.init(type, value)) }
            }
        case .cleartagid(let id, let name):
            try queue.editTags(ofID: id) { tags in
                guard let name else { return tags.removeAll() }
                tags.removeAll { $0.type.rawValue == name }
            }
        default:
            return nil
        }
        return .empty
    }

    /// The song blocks of the entries at `positions`.
    private func songs(_ positions: some Sequence<Int>) -> Reply {
        var reply = Reply()
        for position in positions { reply.append(queue.songInfo(at: position)) }
        return reply
    }

    /// What `add` or `addid` queues for `uri`: a stream (`http(s)://`, checked by ``StreamURL``),
    /// or the music directory's files at that path.
    private func files(_ uri: String, orError error: MPDError) throws(MPDError) -> [URL] {
        if StreamURL.hasScheme(uri) { return [try StreamURL.parse(uri)] }
        guard let files = library.files(for: uri), !files.isEmpty else { throw error }
        return files
    }
}

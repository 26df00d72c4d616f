import Foundation
import MPDProtocol

/// The music directory's songs with their tags: MPD's database, as `lsinfo`, `find`,
/// `search`, `list`, `count` and `stats` read it.
///
/// A value: ``LibraryUpdater`` builds a new one off the partition's queue and hands it
/// over whole, so a command never sees half an update. It is saved as JSON under the state
/// directory and loaded at start; an update re-reads only the files whose size or
/// modification time changed.
struct SongDatabase: Codable, Sendable, Equatable {
    /// One song file.
    struct Record: Codable, Sendable, Equatable, FilterableSong {
        /// The path relative to the music directory.
        var uri: String
        /// Modification time (seconds since 1970), as `Last-Modified` shows it.
        var modified: Int64
        /// The modification time in nanoseconds and the size: what says a file changed. Whole
        /// seconds are not enough: a file retagged within the second it was read in keeps them
        /// (and often its size too: a tag editor rewrites the tag within its padding).
        var modifiedNanoseconds: Int64 = 0
        var size: Int64
        var duration: Double?
        var format: String?
        /// Tag values in MPD's order (saved as `{"type": "Artist", "value": ...}`).
        var tags: [SongInfo.Tag]

        var lastModified: Int64? { modified }
        var audioFormat: String? { format }

        /// The song block without queue fields.
        var info: SongInfo {
            SongInfo(file: uri, lastModified: modified, format: format, tags: tags, duration: duration)
        }

        /// The values of `type` (the URI for `file`), or of the first of its fallback tags the
        /// song has (`list albumartist` shows the Artist of a song without AlbumArtist, as
        /// MPD's `VisitTagWithFallbackOrEmpty`); `[""]` when the song has none of them.
        func values(of key: FilterKey) -> [String] {
            var values: [String] = []
            forEachValue(of: key) { values.append($0) }
            return values
        }

        /// Calls `body` with each of ``values(of:)``, without making the array.
        func forEachValue(of key: FilterKey, _ body: (String) -> Void) {
            switch key {
            case .file: body(uri)
            case .tag(let type):
                if forEachValue(ofTag: type, body) { return }
                for fallback in type.fallbacks {
                    if forEachValue(ofTag: fallback, body) { return }
                }
                body("")
            default: body("")
            }
        }

        /// Calls `body` with each value of the tag `type`; false if the song has none.
        private func forEachValue(ofTag type: TagType, _ body: (String) -> Void) -> Bool {
            var found = false
            for index in tags.indices where tags[index].type == type {
                found = true
                body(tags[index].value)
            }
            return found
        }

        /// Inserts into `rows` the row `prefix` followed by each combination of values of
        /// `keys`, one value of each; `prefix` comes back as it was. It works in one buffer,
        /// so `list` over a large library allocates only for rows not seen before.
        func insertCombinations(of keys: ArraySlice<FilterKey>, after prefix: inout [String], into rows: inout Set<[String]>) {
            guard let key = keys.first else {
                rows.insert(prefix)
                return
            }
            forEachValue(of: key) { value in
                prefix.append(value)
                insertCombinations(of: keys.dropFirst(), after: &prefix, into: &rows)
                prefix.removeLast()
            }
        }
    }

    /// 2: the tags MPD reads from ID3 beyond the first six (AlbumArtist, Composer, Disc, ...);
    /// a database of an older version is built anew, so its songs gain them.
    static let currentVersion = 2
    var version = SongDatabase.currentVersion
    /// The music directory the URIs are relative to: a database of another directory is not used.
    var root: String
    /// Every song, by URI.
    var records: [String: Record] = [:]
    /// When the last update finished (seconds since 1970), for `stats`' `db_update`; 0: never.
    var updated: Int64 = 0

    init(root: String) {
        self.root = root
    }

    /// Every song, sorted by URI (MPD's order: directories' contents by name).
    var sorted: [Record] {
        records.values.sorted { $0.uri.compare($1.uri, options: [.numeric]) == .orderedAscending }
    }

    /// What `lsinfo URI` shows: the directory's subdirectories (with the newest modification
    /// time inside each) and its songs; nil if `uri` names neither a directory nor a song.
    func listing(of uri: String) -> (directories: [(uri: String, modified: Int64)], songs: [Record])? {
        let trimmed = Self.trimmed(uri)
        if let song = records[trimmed] { return ([], [song]) }
        let prefix = trimmed.isEmpty ? "" : trimmed + "/"
        var directories: [String: Int64] = [:]
        var songs: [Record] = []
        for record in records.values where record.uri.hasPrefix(prefix) {
            let rest = record.uri.dropFirst(prefix.count)
            if let slash = rest.firstIndex(of: "/") {
                let directory = prefix + rest[..<slash]
                directories[directory] = max(directories[directory] ?? 0, record.modified)
            } else {
                songs.append(record)
            }
        }
        if !trimmed.isEmpty && directories.isEmpty && songs.isEmpty { return nil }
        let byName = { (a: String, b: String) in a.compare(b, options: [.numeric]) == .orderedAscending }
        return (directories.map { ($0.key, $0.value) }.sorted { byName($0.uri, $1.uri) }, songs.sorted { byName($0.uri, $1.uri) })
    }

    /// `list TAG [FILTER] [group TAG...]`: the distinct values of `key` among the songs that
    /// pass `filter`, sorted, nested under the distinct values of each group tag.
    func distinctValues(of key: FilterKey, filter: SongFilter?, groups: [FilterKey]) -> [[String]] {
        let keys = groups + [key]
        var rows = Set<[String]>()
        var row: [String] = []
        row.reserveCapacity(keys.count)
        for record in records.values where filter?.matches(record) ?? true {
            record.insertCombinations(of: keys[...], after: &row, into: &rows)
        }
        return rows.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// MPD accepts `/` and a leading or trailing slash for the root and directories.
    static func trimmed(_ uri: String) -> String {
        var text = Substring(uri)
        while text.hasPrefix("/") { text = text.dropFirst() }
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}

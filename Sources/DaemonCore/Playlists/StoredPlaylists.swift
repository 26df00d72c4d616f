import Foundation
import MPDProtocol
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// Stored playlists: `NAME.m3u` files in one directory (`$XDG_STATE_HOME/queueplayerd/playlists`),
/// one song URI a line, relative to the music directory, as MPD writes them.
///
/// Names are checked before any path is made from them: no `/`, no NUL, CR or LF, not
/// empty, so a name can never reach outside the directory. Every change is written to a
/// temporary file and renamed over the old one, so a crash leaves the old list or the new,
/// never half of one. Errors are the `ACK`s MPD sends for the same cases.
///
/// It does its own file I/O and keeps no state: the daemon calls it on its partition queue.
package struct StoredPlaylists: Sendable {
    /// The most songs one stored playlist may hold (MPD's `max_playlist_length` default).
    static let maximumLength = 16_384

    let directory: URL

    package init(directory: URL) {
        self.directory = directory
    }

    /// A playlist's name and when its file last changed.
    struct Info: Sendable, Equatable {
        var name: String
        var lastModified: Date
    }

    // MARK: - Reading

    /// `listplaylists`: every playlist, by name.
    func list() throws(MPDError) -> [Info] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            if !FileManager.default.fileExists(atPath: directory.path) { return [] }
            throw MPDError(.system, "cannot read the playlist directory: \(error.localizedDescription)")
        }
        return names.sorted().compactMap { file in
            guard file.hasSuffix(".m3u"), file.count > 4 else { return nil }
            let name = String(file.dropLast(4))
            guard Self.isValidName(name) else { return nil }
            var info = stat()
            guard stat(directory.appendingPathComponent(file).path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                return nil
            }
            return Info(name: name, lastModified: Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)))
        }
    }

    /// `listplaylist` / `load`: the playlist's song URIs, in order. Lines are taken as they
    /// are, as mpd reads them: a file name may begin or end with spaces. (A CRLF ending is one
    /// newline character in Swift, so playlists written on Windows read right too.)
    func songs(in name: String) throws(MPDError) -> [String] {
        let file = try path(of: name)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw MPDError(.noExist, "No such playlist")
        }
        return String(decoding: data, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .map(String.init)
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    // MARK: - Changing

    /// `save NAME [MODE]`: writes `uris` as the playlist.
    func save(_ uris: [String], as name: String, mode: SaveMode = .create) throws(MPDError) {
        let exists = FileManager.default.fileExists(atPath: try path(of: name).path)
        switch mode {
        case .create:
            if exists { throw MPDError(.exist, "Playlist already exists") }
            try write(uris, to: name)
        case .replace:
            try write(uris, to: name)
        case .append:
            guard exists else { throw MPDError(.noExist, "No such playlist") }
            try write(try songs(in: name) + uris, to: name)
        }
    }

    /// `playlistadd NAME URI [POSITION]`: adds songs, creating the playlist if needed.
    func add(_ uris: [String], to name: String, at position: Int? = nil) throws(MPDError) {
        var songs = try existingSongs(in: name) ?? []
        let at = position ?? songs.count
        guard at <= songs.count else { throw MPDError(.argument, "Bad position") }
        guard songs.count + uris.count <= Self.maximumLength else {
            throw MPDError(.playlistMax, "Stored playlist is too large")
        }
        songs.insert(contentsOf: uris, at: at)
        try write(songs, to: name)
    }

    /// How many songs the playlist holds, 0 if there is none; its name is checked all the same.
    func countOfSongs(in name: String) throws(MPDError) -> Int {
        try existingSongs(in: name)?.count ?? 0
    }

    /// `playlistclear NAME`: empties the playlist, creating it if needed.
    func clear(_ name: String) throws(MPDError) {
        try write([], to: name)
    }

    /// `playlistdelete NAME POS|START:END`.
    func delete(_ range: Range<Int>, from name: String) throws(MPDError) {
        var songs = try self.songs(in: name)
        guard range.lowerBound >= 0, range.upperBound <= songs.count, !range.isEmpty else {
            throw MPDError(.argument, "Bad song index")
        }
        songs.removeSubrange(range)
        try write(songs, to: name)
    }

    /// `playlistmove NAME FROM[:END] TO`: moves songs so the first lands at `destination`.
    func move(_ range: Range<Int>, to destination: Int, in name: String) throws(MPDError) {
        var songs = try self.songs(in: name)
        guard range.lowerBound >= 0, range.upperBound <= songs.count, destination >= 0,
              destination <= songs.count - range.count else {
            throw MPDError(.argument, "Bad range")
        }
        let moving = Array(songs[range])
        songs.removeSubrange(range)
        songs.insert(contentsOf: moving, at: destination)
        try write(songs, to: name)
    }

    /// `rename NAME NEW_NAME`.
    func rename(_ name: String, to newName: String) throws(MPDError) {
        let from = try path(of: name), to = try path(of: newName)
        guard FileManager.default.fileExists(atPath: from.path) else { throw MPDError(.noExist, "No such playlist") }
        guard !FileManager.default.fileExists(atPath: to.path) else { throw MPDError(.exist, "Playlist already exists") }
        guard Foundation.rename(from.path, to.path) == 0 else {
            throw MPDError(.system, "cannot rename the playlist: \(String(cString: strerror(errno)))")
        }
    }

    /// `rm NAME`.
    func remove(_ name: String) throws(MPDError) {
        let file = try path(of: name)
        guard unlink(file.path) == 0 else {
            if errno == ENOENT { throw MPDError(.noExist, "No such playlist") }
            throw MPDError(.system, "cannot remove the playlist: \(String(cString: strerror(errno)))")
        }
    }

    // MARK: - Names and files

    /// MPD's rule for playlist names, plus the characters a line-based protocol cannot carry.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == 0x0A || $0 == 0x0D }
    }

    private func path(of name: String) throws(MPDError) -> URL {
        guard Self.isValidName(name) else { throw MPDError(.argument, "Bad playlist name") }
        return directory.appendingPathComponent(name + ".m3u", isDirectory: false)
    }

    private func existingSongs(in name: String) throws(MPDError) -> [String]? {
        do {
            return try songs(in: name)
        } catch where error.code == .noExist {
            return nil
        }
    }

    /// Writes the playlist atomically: a temporary file in the same directory, fsynced, renamed.
    private func write(_ uris: [String], to name: String) throws(MPDError) {
        let file = try path(of: name)
        guard uris.count <= Self.maximumLength else { throw MPDError(.playlistMax, "Stored playlist is too large") }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw MPDError(.system, "cannot create \(directory.path): \(error.localizedDescription)")
        }
        let bytes = Array(uris.map { $0 + "\n" }.joined().utf8)
        let temporary = directory.appendingPathComponent(".\(name).m3u.tmp-\(getpid())")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.systemError("cannot write the playlist \(name)") }
        var failure: MPDError?
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                failure = Self.systemError("cannot write the playlist \(name)")
                break
            }
            offset += count
        }
        if failure == nil && fsync(descriptor) != 0 { failure = Self.systemError("cannot write the playlist \(name)") }
        close(descriptor)
        if failure == nil && Foundation.rename(temporary.path, file.path) != 0 {
            failure = Self.systemError("cannot write the playlist \(name)")
        }
        if let failure {
            unlink(temporary.path)
            throw failure
        }
    }

    private static func systemError(_ what: String) -> MPDError {
        MPDError(.system, "\(what): \(String(cString: strerror(errno)))")
    }
}

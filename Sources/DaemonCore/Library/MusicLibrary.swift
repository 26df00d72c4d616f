import Foundation
import MPDProtocol
#if canImport(Glibc)
import Glibc
#endif
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// The music directory the control socket's `add` and `update` work in (mpd's
/// `music_directory`). Every path a client gives is resolved inside it: `..`,
/// absolute paths and symlinks that lead out of it are refused.
package struct MusicLibrary: Sendable {
    /// The directory, with symlinks resolved.
    let root: URL

    package init(root: URL) {
        self.root = root.resolvingSymlinksInPath().standardizedFileURL
    }

    /// The MP3 files `uri` names: one file, or a directory's files recursively,
    /// sorted by path. `""` and `"/"` name the whole library. Only regular files count:
    /// a FIFO or a device named `x.mp3` is not a song (opening it could block).
    func files(for uri: String) -> [URL]? {
        var relative = uri
        if relative.hasPrefix(root.path + "/") { relative.removeFirst(root.path.count + 1) }
        if relative.hasPrefix("/") && relative != "/" { return nil }
        if relative == "/" { relative = "" }
        let candidate = relative.isEmpty ? root : root.appendingPathComponent(relative)
        let resolved = candidate.resolvingSymlinksInPath().standardizedFileURL
        guard contains(resolved) else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory) else { return nil }
        if !isDirectory.boolValue {
            return Self.isMP3(resolved) && Self.isRegularFile(resolved) ? [resolved] : nil
        }
        return allFiles(under: resolved) ?? []
    }

    /// Every MP3 file in the library, for `update`.
    func allFiles() -> [URL] { allFiles(under: root) ?? [] }

    /// Every MP3 file in the library, or nil once `isCancelled` turns true (checked for each
    /// entry of the walk, so a background task stops promptly).
    func allFiles(isCancelled: () -> Bool) -> [URL]? { allFiles(under: root, isCancelled: isCancelled) }

    /// The MP3 files at or under `uri` (relative, already checked by `update`'s parsing), for
    /// `update URI`: `[]` if it names nothing, or something outside the library (its songs
    /// are then dropped from the database); nil once `isCancelled` turns true.
    func files(toUpdate uri: String, isCancelled: () -> Bool) -> [URL]? {
        let resolved = root.appendingPathComponent(uri).resolvingSymlinksInPath().standardizedFileURL
        guard contains(resolved) else { return [] }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved.path, isDirectory: &isDirectory) else { return [] }
        if isDirectory.boolValue { return allFiles(under: resolved, isCancelled: isCancelled) }
        return Self.isMP3(resolved) && Self.isRegularFile(resolved) ? [resolved] : []
    }

    /// The path of `url` relative to the root (the `file:` of a song block).
    func uri(for url: URL) -> String {
        // Standardizing is slow and runs for every song of a `playlistinfo`; queued URLs
        // are standard already, unless they hold `.`, `..` or `//`.
        var path = url.path
        if path.contains("/.") || path.contains("//") { path = url.standardizedFileURL.path }
        return path.hasPrefix(root.path + "/") ? String(path.dropFirst(root.path.count + 1)) : path
    }

    /// Where `uri` points in the library, symlinks not yet resolved: a relative path, or an
    /// absolute one inside the root. Nil for a path that leads out of the library (absolute
    /// elsewhere, or with `.`, `..` or empty segments).
    func path(of uri: String) -> URL? {
        var relative = uri
        if relative.hasPrefix(root.path + "/") { relative.removeFirst(root.path.count + 1) }
        guard !relative.hasPrefix("/"), SongFilter.isSafeRelativeURI(relative) else { return nil }
        return relative.isEmpty ? root : root.appendingPathComponent(relative)
    }

    /// Whether `url` (resolved) is the root or inside it.
    func contains(_ url: URL) -> Bool {
        url.path == root.path || url.path.hasPrefix(root.path + "/")
    }

    private func allFiles(under directory: URL, isCancelled: () -> Bool = { false }) -> [URL]? {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return []
        }
        var found: [(uri: String, url: URL)] = []
        for case let url as URL in enumerator where Self.isMP3(url) {
            if isCancelled() { return nil }
            // A symlink inside the library that points out of it is not part of it.
            let resolved = url.resolvingSymlinksInPath().standardizedFileURL
            if contains(resolved) && Self.isRegularFile(resolved) { found.append((uri(for: resolved), resolved)) }
        }
        return found.sorted { $0.uri.compare($1.uri, options: [.numeric]) == .orderedAscending }.map(\.url)
    }

    private static func isMP3(_ url: URL) -> Bool {
        url.pathExtension.lowercased() == "mp3" && !url.lastPathComponent.hasPrefix(".")
    }

    /// The `.mp3` files directly inside `directory`, sorted by name: what `--media DIR`
    /// queues. Only regular files (or links to them) count: a FIFO named `x.mp3` would block
    /// whoever opens it.
    package static func topLevelFiles(in directory: URL) throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        return names
            .filter { $0.lowercased().hasSuffix(".mp3") && !$0.hasPrefix(".") }
            .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending }
            .map { directory.appendingPathComponent($0) }
            .filter(isRegularFile)
    }

    /// Whether `url` is a regular file, after following symbolic links. `stat` never
    /// blocks, unlike opening a FIFO or a device, so this is safe on any path.
    static func isRegularFile(_ url: URL) -> Bool {
        var info = stat()
        return stat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }
}

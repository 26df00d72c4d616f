import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds the MP3 files the daemon queues.
enum MediaLibrary {
    /// The `.mp3` files directly inside `directory`, sorted by name. Only regular files
    /// (or links to them) count: a FIFO named `x.mp3` would block whoever opens it.
    static func files(in directory: URL) throws -> [URL] {
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

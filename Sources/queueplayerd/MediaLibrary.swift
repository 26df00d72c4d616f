import Foundation

/// Finds the MP3 files the daemon queues.
enum MediaLibrary {
    /// The `.mp3` files directly inside `directory`, sorted by name.
    static func files(in directory: URL) throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        return names
            .filter { $0.lowercased().hasSuffix(".mp3") && !$0.hasPrefix(".") }
            .sorted { $0.compare($1, options: [.numeric]) == .orderedAscending }
            .map { directory.appendingPathComponent($0) }
    }
}

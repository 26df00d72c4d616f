#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import QueuePlayer
import Synchronization

/// The loudness measured of each file (``LoudnessMeasurement``), by path, with the file's size
/// and modification time when measured: a file changed since is not taken for measured.
///
/// A small store of its own, `loudness.json` beside the state, rather than stickers: it works
/// with `--sticker-file off`, does not make the sticker database of a daemon nobody asked for
/// stickers, and the player's lookup at each item's open is a dictionary's, not an SQL query.
/// Kept in memory (a mutex: the player's opener reads it, the scan queue writes it); written
/// whole, atomically, after each measurement, by the scan queue; at most ``capacity`` files.
final class LoudnessStore: Sendable {
    struct Entry: Codable, Sendable, Equatable {
        var loudness: Double
        var truePeak: Double
        var size: Int64
        var modified: Int64
    }

    /// The most files remembered: a measurement is 40 bytes, so the file stays small.
    static let capacity = 100_000

    private let file: URL?
    private let entries: Mutex<[String: Entry]>

    /// Reads `file` (nil: kept in memory only); a file that cannot be read starts empty.
    init(file: URL?) {
        self.file = file
        var loaded: [String: Entry] = [:]
        if let file, let data = try? Data(contentsOf: file),
           let decoded = try? JSONDecoder().decode([String: Entry].self, from: data) {
            loaded = decoded.filter { $0.value.loudness.isFinite && $0.value.truePeak.isFinite }
        }
        entries = Mutex(loaded)
    }

    /// The measurement of the file at `url`, if it is the file measured.
    func measurement(of url: URL) -> LoudnessMeasurement? {
        let path = url.standardizedFileURL.path
        guard let entry = entries.withLock({ $0[path] }), let identity = FileIdentity(path: path),
              identity.size == entry.size, identity.modified == entry.modified else { return nil }
        return LoudnessMeasurement(integrated: entry.loudness, truePeak: entry.truePeak)
    }

    /// Remembers `measurement` of the file at `url` (as it is now) and saves the store; a silent
    /// file's (no finite loudness: nothing to bring to a target) is not kept. Blocking (file
    /// I/O): off any event loop.
    func remember(_ measurement: LoudnessMeasurement, of url: URL) {
        let path = url.standardizedFileURL.path
        guard measurement.integrated.isFinite, measurement.truePeak.isFinite, let identity = FileIdentity(path: path) else { return }
        let entry = Entry(loudness: measurement.integrated, truePeak: measurement.truePeak,
                          size: identity.size, modified: identity.modified)
        let snapshot = entries.withLock { entries -> [String: Entry]? in
            guard entries[path] != nil || entries.count < Self.capacity else { return nil }
            entries[path] = entry
            return entries
        }
        guard let file, let snapshot, let data = try? JSONEncoder().encode(snapshot) else { return }
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? data.write(to: file, options: .atomic)
    }
}

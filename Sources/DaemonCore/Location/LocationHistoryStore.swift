import Dispatch
import Foundation
import Location
import Logging

/// The last fixes kept (the seed's 100 pins), saved beside the state as `locations.json` so
/// they survive a restart.
///
/// Written whole and atomically (a temporary file renamed over the old one) on its own queue,
/// `queueplayerd.locations`, never on the partition's; and not more than needed: a fix asks for a
/// save, and the saves asked for within ``delay`` are one write (a fix a second would otherwise
/// be a write a second). At shutdown the last one is written at once.
final class LocationHistoryStore: Sendable {
    /// At most this many fixes are kept.
    static let capacity = 100
    /// Seconds a save waits for more fixes.
    static let delay = 5.0

    let file: URL
    private let queue = DispatchQueue(label: "queueplayerd.locations")
    private let logger: Logger

    init(file: URL, logger: Logger) {
        self.file = file
        self.logger = logger
    }

    /// The fixes saved, oldest first; none if there is no file. One that cannot be read is
    /// moved aside (`locations.json.unusable-<time>`), not overwritten.
    func load() -> [Location] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            if FileManager.default.fileExists(atPath: file.path) { logger.warning("cannot read \(file.path): \(error.localizedDescription)") }
            return []
        }
        do {
            let fixes = try Self.decoder.decode([Location].self, from: data)
            return Array(fixes.filter(\.coordinate.isValid).suffix(Self.capacity))
        } catch {
            let aside = file.appendingPathExtension("unusable-\(Int(Date().timeIntervalSince1970))")
            try? FileManager.default.moveItem(at: file, to: aside)
            logger.warning("\(file.path) is not usable (moved to \(aside.lastPathComponent)): \(error)")
            return []
        }
    }

    /// Writes `fixes` on the store's queue, `after` seconds from now; `done` runs there once written.
    func save(_ fixes: [Location], after delay: Double = 0, done: @escaping @Sendable () -> Void = {}) {
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            write(fixes)
            done()
        }
    }

    private func write(_ fixes: [Location]) {
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try Self.encoder.encode(fixes).write(to: file, options: .atomic)
        } catch {
            logger.warning("cannot save \(file.path): \(error.localizedDescription)")
        }
    }

    /// Times as seconds since 1970, exact; keys sorted, one fix a line block: a file a person can read.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}

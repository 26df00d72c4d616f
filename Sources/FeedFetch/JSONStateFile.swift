import Foundation

/// A value kept as JSON in the state directory, written whole and atomically (a temporary
/// file renamed over the old one), as the feeds' records and the transfer journal are.
///
/// A file that cannot be read back is moved aside (`<name>.unusable-<time>`), not
/// overwritten: what it held may still be wanted, and the daemon starts without it.
/// Not thread-safe: its owner calls it from one queue.
struct JSONStateFile<Value: Codable>: Sendable {
    let file: URL

    /// The value saved; nil when there is no file. `problem` says why a file that exists was not usable.
    func load() -> (value: Value?, problem: String?) {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch CocoaError.fileReadNoSuchFile {
            return (nil, nil)
        } catch {
            return (nil, "cannot read \(file.path): \(error.localizedDescription)")
        }
        do {
            return (try JSONDecoder.feeds.decode(Value.self, from: data), nil)
        } catch {
            let aside = file.appendingPathExtension("unusable-\(Int(Date().timeIntervalSince1970))")
            try? FileManager.default.moveItem(at: file, to: aside)
            return (nil, "\(file.path) is not usable (moved to \(aside.lastPathComponent)): \(error)")
        }
    }

    func save(_ value: Value) throws {
        try save(data: JSONEncoder.feeds.encode(value))
    }

    /// Writes `data`, a value encoded already (the caller counts its bytes).
    func save(data: Data) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try data.write(to: file, options: .atomic)
    }
}

extension JSONEncoder {
    /// Dates as ISO 8601 text, keys sorted: a file a person can read and diff.
    static var feeds: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return encoder
    }
}

extension JSONDecoder {
    static var feeds: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

import Foundation

/// The Podcasting 2.0 chapters format (`application/json+chapters`, the file a feed item's
/// `<podcast:chapters>` names): `{"version": "1.2.0", "chapters": [{"startTime": 0,
/// "title": "..", "url": "..", "img": "..", "endTime": ..}]}`.
///
/// The file is untrusted input: one over ``maximumSize`` bytes or nested deeper than
/// ``maximumDepth`` is refused before it is parsed (a scan of its bytes, O(size), no
/// allocation); a chapter without a numeric `startTime`, or with `toc: false` (the format's
/// hidden chapter), is skipped; a field of the wrong type is ignored; at most
/// ``Chapter/maximumCount`` entries are looked at. The result is ``Chapter/normalized(_:duration:)``
/// by the caller that knows the duration.
public enum PodcastChapters {
    public static let maximumSize = 1 << 20
    public static let maximumDepth = 16

    /// Why a chapters file was refused whole.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLarge(Int)
        case tooDeep
        case notJSON
        case noChapters

        public var description: String {
            switch self {
            case .tooLarge(let size): "the chapters file has \(size) bytes, more than the \(PodcastChapters.maximumSize) allowed"
            case .tooDeep: "the chapters file is nested deeper than \(PodcastChapters.maximumDepth) levels"
            case .notJSON: "the chapters file is not valid JSON"
            case .noChapters: "the chapters file has no \"chapters\" array"
            }
        }
    }

    /// What a file gave: its chapters (in the file's order) and how many entries were skipped.
    public struct Result: Sendable, Equatable {
        public var chapters: [Chapter]
        public var skipped: Int
    }

    /// The chapters of the file at `url`; throws ``Failure`` (or the file system's error) if
    /// there are none to take. Reads at most ``maximumSize`` + 1 bytes.
    public static func read(_ url: URL) throws -> Result {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        return try parse(data)
    }

    public static func parse(_ data: Data) throws(Failure) -> Result {
        guard data.count <= maximumSize else { throw .tooLarge(data.count) }
        guard depth(of: data) <= maximumDepth else { throw .tooDeep }
        guard let file = try? JSONDecoder().decode(File.self, from: data) else { throw .notJSON }
        guard let entries = file.chapters else { throw .noChapters }
        var result = Result(chapters: [], skipped: file.skipped)
        for entry in entries {
            guard let entry, let start = entry.startTime, start.isFinite, entry.toc != false else {
                result.skipped += 1
                continue
            }
            result.chapters.append(Chapter(title: entry.title ?? "", start: start, end: entry.endTime ?? .infinity,
                                           url: entry.url.flatMap(ID3Chapters.webURL),
                                           picture: entry.img.flatMap(ID3Chapters.webURL).map { .remote($0) }))
        }
        return result
    }

    /// The file's shape, every field optional and of its type or nil.
    private struct File: Decodable {
        /// The first ``Chapter/maximumCount`` entries: nil where one is not an object.
        var chapters: [Entry?]?
        /// The entries past those.
        var skipped = 0

        enum Keys: String, CodingKey { case chapters }

        init(from decoder: any Swift.Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            guard var list = try? container.nestedUnkeyedContainer(forKey: .chapters) else { return }
            var entries: [Entry?] = []
            while !list.isAtEnd {
                if entries.count == Chapter.maximumCount {
                    _ = try? list.decode(Skip.self)
                    skipped += 1
                } else {
                    entries.append((try? list.decode(Entry.self)) ?? { _ = try? list.decode(Skip.self); return nil }())
                }
            }
            chapters = entries
        }
    }

    /// One entry: a field of the wrong type is nil.
    private struct Entry: Decodable {
        var startTime: Double?
        var endTime: Double?
        var title: String?
        var url: String?
        var img: String?
        var toc: Bool?

        enum Keys: String, CodingKey { case startTime, endTime, title, url, img, toc }

        init(from decoder: any Swift.Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            startTime = try? container.decode(Double.self, forKey: .startTime)
            endTime = try? container.decode(Double.self, forKey: .endTime)
            title = try? container.decode(String.self, forKey: .title)
            url = try? container.decode(String.self, forKey: .url)
            img = try? container.decode(String.self, forKey: .img)
            toc = try? container.decode(Bool.self, forKey: .toc)
        }
    }

    /// Any value, decoded only to move past it.
    private struct Skip: Decodable {
        init(from decoder: any Swift.Decoder) throws {}
    }

    /// The deepest nesting of arrays and objects in `data`, brackets inside strings not counted.
    static func depth(of data: Data) -> Int {
        var deepest = 0, current = 0
        var inString = false, escaped = false
        for byte in data {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                current += 1
                deepest = max(deepest, current)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): current -= 1
            default: break
            }
        }
        return deepest
    }
}

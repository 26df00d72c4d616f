#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The chapters of an MP3 file's ID3v2 tag: its `CHAP` frames (ID3v2 Chapter Frame Addendum
/// 1.0), each with a start and end in milliseconds and subframes: `TIT2` the title, `WXXX`
/// (or `WOAR`) a URL, `APIC` a picture; and its `CTOC` frames, whose top-level table of
/// contents, where there is one, says which `CHAP` frames are chapters (nested tables
/// included).
///
/// A tag is untrusted input. The walk reads headers only (``ID3v2Tag``); of each `CHAP` frame
/// at most ``frameReadLimit`` bytes are read (its picture is located, not read); at most
/// ``Chapter/maximumCount`` `CHAP` frames and ``maximumTables`` `CTOC` frames are parsed, in
/// the order of the file. A frame that cannot be parsed is skipped and named in
/// ``Result/problems``; whatever it holds, the file still plays. The result is
/// ``Chapter/normalized(_:duration:)`` by the caller that knows the duration.
public enum ID3Chapters {
    /// What a file's tag gave: its chapters (in the order of the file, not normalized) and what
    /// was wrong with it, if anything (one line each, at most ``maximumProblems``).
    public struct Result: Sendable, Equatable {
        public var chapters: [Chapter] = []
        public var problems: [String] = []
    }

    /// The most bytes read of one `CHAP` or `CTOC` frame (its header fields and subframes; an
    /// `APIC` subframe's picture may lie beyond: it is located, not read).
    static let frameReadLimit = 16 * 1024
    /// The most `CTOC` frames parsed.
    static let maximumTables = 64
    static let maximumProblems = 8

    /// The chapters of the file at `url`; an empty result for a file without a tag (or one
    /// that cannot be opened: the player says why when it opens it).
    public static func read(_ url: URL) -> Result {
        guard let file = try? BufferedFile.open(url) else { return Result() }
        return read(file)
    }

    static func read(_ file: BufferedFile) -> Result {
        var result = Result()
        func problem(_ text: String) {
            if result.problems.count < maximumProblems { result.problems.append(text) }
        }
        let tag: ID3v2Tag
        do throws(ID3v2Tag.Failure) {
            guard let found = try ID3v2Tag.read(file), found.major >= 3 else { return result }
            tag = found
        } catch {
            problem(error.description)
            return result
        }
        var chapters: [(id: String, chapter: Chapter)] = []
        var tables: [Table] = []
        var skippedChapters = 0
        do throws(ID3v2Tag.Failure) {
            try tag.walk(file) { frame in
                guard frame.id == "CHAP" || frame.id == "CTOC" else { return true }
                if frame.id == "CHAP" && chapters.count >= Chapter.maximumCount {
                    skippedChapters += 1
                    return true
                }
                if frame.id == "CTOC" && tables.count >= maximumTables { return true }
                guard !ID3v2Tag.isSkippedByLibmpg123(frame) else {
                    problem("a compressed or encrypted \(frame.id) frame at byte \(frame.offset) is skipped")
                    return true
                }
                guard let data = FrameData(frame, of: tag, file: file) else {
                    problem("the \(frame.id) frame at byte \(frame.offset) cannot be read")
                    return true
                }
                if frame.id == "CHAP" {
                    if let parsed = chapter(data, tag: tag) { chapters.append(parsed) } else {
                        problem("the CHAP frame at byte \(frame.offset) is malformed")
                    }
                } else if let parsed = table(data) {
                    tables.append(parsed)
                } else {
                    problem("the CTOC frame at byte \(frame.offset) is malformed")
                }
                return true
            }
        } catch {
            problem(error.description)
        }
        if skippedChapters > 0 {
            problem("\(skippedChapters) CHAP frames beyond the first \(Chapter.maximumCount) are ignored")
        }
        result.chapters = inTableOfContents(chapters, tables: tables)
        return result
    }

    // MARK: - Frames

    /// A `CTOC` frame: its element id, whether it is the top-level table, and its entries.
    struct Table {
        var id: String
        var isTopLevel: Bool
        var children: [String]
    }

    /// The bytes of a frame's data read (up to ``frameReadLimit``), resynchronised where the
    /// tag or the frame is unsynchronised, and the file offset of the first of them where they
    /// are the file's bytes as they are (nil if resynchronised: nothing in it can be located).
    struct FrameData {
        var bytes: [UInt8]
        var fileOffset: Int64?
        /// The frame's data size in the file from `fileOffset` on (a picture may end there).
        var fileSize: Int64

        init?(_ frame: ID3v2Tag.Frame, of tag: ID3v2Tag, file: BufferedFile) {
            let (offset, size) = tag.content(of: frame)
            guard size > 0 else { return nil }
            let wanted = Int(min(size, Int64(ID3Chapters.frameReadLimit)))
            guard let read = file.read(at: offset, count: wanted), read.count == wanted else { return nil }
            if tag.isUnsynchronised || frame.flags & 0x0002 != 0 {
                (bytes, fileOffset, fileSize) = (ID3v2Tag.resynchronised(read), nil, size)
            } else {
                (bytes, fileOffset, fileSize) = (read, offset, size)
            }
        }
    }

    /// A `CHAP` frame's chapter and its element id; nil if its fixed fields are missing.
    static func chapter(_ data: FrameData, tag: ID3v2Tag) -> (id: String, chapter: Chapter)? {
        let bytes = data.bytes[...]
        guard let idEnd = bytes.firstIndex(of: 0), idEnd + 17 <= bytes.endIndex else { return nil }
        let id = latin1(bytes[..<idEnd])
        let times = bytes[(idEnd + 1)...]
        let start = ID3v2Tag.plain(times.prefix(4)) ?? 0
        let end = ID3v2Tag.plain(times.dropFirst(4).prefix(4)) ?? 0
        // 0xFFFFFFFF in the byte offsets says the times are what counts; the times always are here.
        var chapter = Chapter(title: "", start: Double(start) / 1000, end: end == 0xFFFF_FFFF ? .infinity : Double(end) / 1000)
        for sub in subframes(of: data, from: idEnd + 17, tag: tag) {
            let content = data.bytes[sub.range]
            switch sub.id {
            case "TIT2" where chapter.title.isEmpty:
                chapter.title = text(content).first ?? ""
            case "WXXX" where chapter.url == nil:
                chapter.url = userURL(content)
            case "WOAR" where chapter.url == nil:
                chapter.url = webURL(latin1(content))
            case "APIC" where chapter.picture == nil:
                chapter.picture = picture(sub, of: data).map { .embedded($0) }
            default:
                break
            }
        }
        return (id, chapter)
    }

    /// A `CTOC` frame's table; nil if its fixed fields are missing.
    static func table(_ data: FrameData) -> Table? {
        let bytes = data.bytes[...]
        guard let idEnd = bytes.firstIndex(of: 0), idEnd + 2 < bytes.endIndex else { return nil }
        let flags = bytes[idEnd + 1]
        var count = Int(bytes[idEnd + 2])
        var children: [String] = []
        var position = idEnd + 3
        while count > 0, position < bytes.endIndex, let end = bytes[position...].firstIndex(of: 0) {
            children.append(latin1(bytes[position..<end]))
            position = end + 1
            count -= 1
        }
        return Table(id: latin1(bytes[..<idEnd]), isTopLevel: flags & 0x02 != 0, children: children)
    }

    /// The chapters a top-level table of contents reaches (through nested tables), if the tag
    /// has one that reaches any; otherwise every `CHAP` frame's.
    static func inTableOfContents(_ chapters: [(id: String, chapter: Chapter)], tables: [Table]) -> [Chapter] {
        guard let top = tables.first(where: \.isTopLevel) else { return chapters.map(\.chapter) }
        let byID = Dictionary(tables.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var reached: Set<String> = []
        var visited: Set<String> = [top.id]
        var pending = top.children
        while let next = pending.popLast() {
            if let nested = byID[next] {
                if visited.insert(next).inserted { pending += nested.children }
            } else {
                reached.insert(next)
            }
        }
        let listed = chapters.filter { reached.contains($0.id) }
        return (listed.isEmpty ? chapters : listed).map(\.chapter)
    }

    // MARK: - Subframes

    struct Subframe {
        var id: String
        /// Where its data lies in the frame's bytes read.
        var range: Range<Int>
        /// Its data size as its header says (its data may go on past the bytes read).
        var size: Int64
    }

    /// The subframes after `start` in a frame's bytes, in the tag's frame header format, up to
    /// the first that does not fit in the frame or has no valid id.
    static func subframes(of data: FrameData, from start: Int, tag: ID3v2Tag) -> [Subframe] {
        let bytes = data.bytes
        var result: [Subframe] = []
        var position = start
        while position + 10 <= bytes.count {
            let id = bytes[position..<position + 4]
            guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { break }
            let sizeBytes = bytes[position + 4..<position + 8]
            guard let size = tag.major == 4 ? ID3v2Tag.syncsafe(sizeBytes) : ID3v2Tag.plain(sizeBytes),
                  Int64(position) + 10 + size <= data.fileSize else { break }
            let flags = UInt16(bytes[position + 8]) << 8 | UInt16(bytes[position + 9])
            var dataStart = position + 10
            var dataSize = size
            if tag.major == 4 && flags & 0x0001 != 0 {
                dataStart += 4
                dataSize -= 4
            }
            guard dataSize >= 0, !ID3v2Tag.isSkippedByLibmpg123(ID3v2Tag.Frame(id: "", offset: 0, headerSize: 10, size: 0, flags: flags)) else {
                position += 10 + Int(size)
                continue
            }
            let available = min(bytes.count, dataStart + Int(min(dataSize, Int64(bytes.count))))
            result.append(Subframe(id: String(decoding: id, as: UTF8.self), range: min(dataStart, available)..<available, size: dataSize))
            guard size < Int64(bytes.count) else { break }
            position += 10 + Int(size)
        }
        return result
    }

    /// The picture of an `APIC` subframe, located in the file; nil if its frame was
    /// resynchronised, its header is not within the bytes read, or it gives a URL.
    static func picture(_ sub: Subframe, of data: FrameData) -> ID3Picture? {
        guard let frameOffset = data.fileOffset, let header = ID3Picture.header(of: data.bytes[sub.range]),
              sub.size > Int64(header.length), header.mimeType != "-->" else { return nil }
        return ID3Picture(mimeType: header.mimeType, type: header.type, length: Int(sub.size) - header.length,
                          location: .file(offset: frameOffset + Int64(sub.range.lowerBound + header.length)))
    }

    // MARK: - Text

    /// The NUL-separated values of a text frame's data (encoding byte, then the text).
    static func text(_ content: ArraySlice<UInt8>) -> [String] {
        guard let encoding = content.first else { return [] }
        return decode(content.dropFirst(), encoding: encoding).split(separator: "\u{0}").map(String.init)
    }

    /// A `WXXX` frame's URL: encoding, a description ending in NUL (two in UTF-16), a Latin-1 URL.
    static func userURL(_ content: ArraySlice<UInt8>) -> URL? {
        guard let encoding = content.first else { return nil }
        var position = content.startIndex + 1
        let wide = encoding == 1 || encoding == 2
        while position < content.endIndex {
            if wide {
                guard position + 1 < content.endIndex else { return nil }
                if content[position] == 0 && content[position + 1] == 0 { position += 2; break }
                position += 2
            } else {
                if content[position] == 0 { position += 1; break }
                position += 1
            }
        }
        return webURL(latin1(content[min(position, content.endIndex)...]))
    }

    /// `text` as a URL if it is an http(s) one of reasonable length.
    static func webURL(_ text: String) -> URL? {
        let trimmed = String(text.prefix { $0 != "\u{0}" })
        guard trimmed.utf8.count <= Chapter.maximumURLLength, let url = URL(string: trimmed),
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        return url
    }

    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.prefix { $0 != 0 }.map { Unicode.Scalar($0) }))
    }

    /// ID3v2 text in `encoding`: 0 Latin-1, 1 UTF-16 with a byte order mark, 2 UTF-16BE, 3 UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> String {
        switch encoding {
        case 0:
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case 1, 2:
            var body = bytes
            var bigEndian = true
            if encoding == 1, body.count >= 2 {
                let first = body[body.startIndex], second = body[body.startIndex + 1]
                if first == 0xFF && second == 0xFE { bigEndian = false; body = body.dropFirst(2) }
                else if first == 0xFE && second == 0xFF { body = body.dropFirst(2) }
            }
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index + 1 < body.endIndex {
                let (a, b) = (UInt16(body[index]), UInt16(body[index + 1]))
                units.append(bigEndian ? a << 8 | b : b << 8 | a)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        default:
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension ID3v2Tag {
    /// Where a frame's content lies: its data, less ID3v2.4's data length indicator (four
    /// bytes before the data proper) where its flag says there is one.
    func content(of frame: Frame) -> (offset: Int64, size: Int64) {
        guard major == 4 && frame.flags & 0x0001 != 0 else { return (frame.dataOffset, frame.size) }
        return (frame.dataOffset + 4, frame.size - 4)
    }
}

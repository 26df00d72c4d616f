
/// The ID3v2 tag at the start of an MP3 file, known by its headers alone.
///
/// libmpg123 reads a tag whole into memory before it parses it (and with `MPG123_PICTURE`
/// copies every picture once more): a file with a 250 MB cover cost 250 MB at every open,
/// the library update's included. This reads the tag's header, then each frame's header,
/// with `pread`, and records where each frame's data lies without reading it. A picture is
/// then read in the pieces a client asks for (``ID3Picture``), and libmpg123 is shown a big
/// tag without the frames it does not read (``slimmed(_:)``, through ``BufferedFile``).
///
/// It follows libmpg123's parser (`id3.c`) so that both agree on what a tag holds: versions
/// 2.2 to 2.4, and a tag with unknown flags, a compressed v2.2 tag or one under 10 bytes is
/// none; frame sizes are plain in v2.3 and syncsafe in v2.4; the walk ends at the first id
/// that is not `[A-Z0-9]` (the padding). Where libmpg123 would allocate what a hostile size
/// claims, this stops with a ``Failure`` instead: a tag that claims more than the file, a
/// frame that claims more than the tag. Nothing here allocates more than a few KiB.
struct ID3v2Tag: Sendable, Equatable {
    /// Why a tag's frames cannot be walked (further).
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The header's size puts the tag's end past the end of the file.
        case tagBeyondFile(tagEnd: Int64, fileSize: Int64)
        /// A frame's size puts its end past the end of the tag.
        case frameBeyondTag(id: String, frameEnd: Int64, tagEnd: Int64)
        /// The extended header's size is not syncsafe (v2.4), too small, or past the tag.
        case badExtendedHeader
        /// A v2.4 frame size that is not syncsafe.
        case badFrameSize(id: String)
        /// The file could not be read at `offset`.
        case unreadable(offset: Int64)

        var description: String {
            switch self {
            case .tagBeyondFile(let tagEnd, let fileSize):
                "the ID3v2 tag claims \(tagEnd) bytes, the file has \(fileSize)"
            case .frameBeyondTag(let id, let frameEnd, let tagEnd):
                "the ID3v2 frame \(id) ends at byte \(frameEnd), past the tag's end at \(tagEnd)"
            case .badExtendedHeader:
                "the ID3v2 extended header's size is invalid"
            case .badFrameSize(let id):
                "the ID3v2.4 frame \(id) has a size that is not syncsafe"
            case .unreadable(let offset):
                "the file cannot be read at byte \(offset)"
            }
        }
    }

    /// One frame: its id and where its header and data lie in the file.
    struct Frame: Sendable, Equatable {
        /// `APIC`, `TIT2`, ... (three letters in v2.2: `PIC`, `TT2`).
        let id: String
        /// Where the frame's header starts.
        let offset: Int64
        /// 10 bytes (v2.3, v2.4) or 6 (v2.2).
        let headerSize: Int
        /// The data's size as the header gives it.
        let size: Int64
        /// The two flag bytes (v2.3, v2.4; 0 in v2.2).
        let flags: UInt16

        var dataOffset: Int64 { offset + Int64(headerSize) }
        var end: Int64 { dataOffset + size }
    }

    /// 2, 3 or 4: ID3v2.2, 2.3, 2.4.
    let major: UInt8
    let revision: UInt8
    let flags: UInt8
    /// The size the header gives: the bytes after the 10-byte header, without a footer.
    let size: Int64

    /// Where the frames (and the padding) end.
    var framesEnd: Int64 { 10 + size }
    /// The first byte after the tag: a footer is counted as libmpg123 counts it, whatever the version.
    var end: Int64 { framesEnd + (flags & 0x10 != 0 ? 10 : 0) }
    /// The tag-wide unsynchronisation flag. libmpg123 (and so this) reads the frame headers as
    /// they are and resynchronises each frame's data, in v2.3 as in v2.4.
    var isUnsynchronised: Bool { flags & 0x80 != 0 }

    /// At most this many frames are walked: a real tag has tens; 250 MB of empty frames would
    /// otherwise hold the caller for seconds. The frames after it are not seen, as padding is not.
    static let maximumFrames = 65_536

    /// The tag at the start of `file`; nil if there is none libmpg123 would parse.
    static func read(_ file: BufferedFile) throws(Failure) -> ID3v2Tag? {
        guard let header = file.read(at: 0, count: 10) else { throw .unreadable(offset: 0) }
        guard header.count == 10, header[0] == UInt8(ascii: "I"), header[1] == UInt8(ascii: "D"), header[2] == UInt8(ascii: "3"),
              (2...4).contains(header[3]), header[4] != 0xFF, header[5] & 0x0F == 0,
              !(header[3] == 2 && header[5] & 0x40 != 0),
              let size = syncsafe(header[6..<10]), size >= 10 else { return nil }
        let tag = ID3v2Tag(major: header[3], revision: header[4], flags: header[5], size: size)
        let fileSize = file.identity.size
        guard tag.end <= fileSize else { throw .tagBeyondFile(tagEnd: tag.end, fileSize: fileSize) }
        return tag
    }

    /// Calls `body` with each frame in the order of the file until it returns false, the
    /// padding begins or ``maximumFrames`` were seen. Reads only headers, through a 4 KiB
    /// window so that a run of small frames costs one `pread`. A bad size ends the walk with
    /// its ``Failure`` after the frames before it were passed on, as libmpg123 keeps those.
    func walk(_ file: BufferedFile, _ body: (Frame) -> Bool) throws(Failure) {
        var window: [UInt8] = []
        var windowStart: Int64 = 0
        func bytes(at offset: Int64, count: Int) throws(Failure) -> ArraySlice<UInt8> {
            if offset < windowStart || offset + Int64(count) > windowStart + Int64(window.count) {
                guard let read = file.read(at: offset, count: max(count, 4096)) else { throw .unreadable(offset: offset) }
                (window, windowStart) = (read, offset)
            }
            let start = Int(offset - windowStart)
            return window[start..<min(window.count, start + count)]
        }

        var position: Int64 = 10
        if major >= 3 && flags & 0x40 != 0 {
            let field = try bytes(at: position, count: 4)
            guard field.count == 4, let stated = major == 3 ? Self.plain(field) : Self.syncsafe(field), stated >= 6 else {
                throw .badExtendedHeader
            }
            // v2.3's size leaves out its own four bytes; v2.4's counts them.
            let skip = major == 3 ? stated + 4 : stated
            guard skip < size else { throw .badExtendedHeader }
            position += skip
        }
        let idSize = major == 2 ? 3 : 4
        let headerSize = major == 2 ? 6 : 10
        var seen = 0
        while position + Int64(headerSize) <= framesEnd && seen < Self.maximumFrames {
            let header = try bytes(at: position, count: headerSize)
            guard header.count == headerSize else { throw .unreadable(offset: position) }
            let id = header.prefix(idSize)
            guard id.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { return }
            let name = String(decoding: id, as: UTF8.self)
            let sizeBytes = header.dropFirst(idSize).prefix(idSize)
            // v2.2 and v2.3 sizes are plain, v2.4's syncsafe.
            guard let frameSize = major == 4 ? Self.syncsafe(sizeBytes) : Self.plain(sizeBytes) else {
                throw .badFrameSize(id: name)
            }
            let flags = major == 2 ? 0 : UInt16(header[header.startIndex + 8]) << 8 | UInt16(header[header.startIndex + 9])
            let frame = Frame(id: name, offset: position, headerSize: headerSize, size: frameSize, flags: flags)
            guard frame.end <= framesEnd else { throw .frameBeyondTag(id: name, frameEnd: frame.end, tagEnd: framesEnd) }
            seen += 1
            guard body(frame) else { return }
            position = frame.end
        }
    }

    /// True if libmpg123 would not read the frame's data: compressed, encrypted, or with flags it
    /// calls invalid (its `BAD_FFLAGS`, `COMPR_FFLAG`, `ENCR_FFLAG`, in v2.4's layout for every version).
    static func isSkippedByLibmpg123(_ frame: Frame) -> Bool {
        frame.flags & (0x8FB0 | 0x0008 | 0x0004) != 0
    }

    /// A big-endian integer of the bytes.
    static func plain(_ bytes: some Collection<UInt8>) -> Int64? {
        // Optional only to read alike with ``syncsafe(_:)``: every plain size is valid.
        bytes.reduce(0) { $0 << 8 | Int64($1) }
    }

    /// A syncsafe integer (seven bits a byte); nil if a byte has its top bit set.
    static func syncsafe(_ bytes: some Collection<UInt8>) -> Int64? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        return bytes.reduce(0) { $0 << 7 | Int64($1) }
    }

    /// Removes unsynchronisation: every `FF 00` becomes `FF`, as libmpg123 resynchronises.
    static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for (index, byte) in bytes.enumerated() {
            if !(index > 0 && byte == 0 && previous == 0xFF) { result.append(byte) }
            previous = byte
        }
        return result
    }
}

// MARK: - What libmpg123 is shown

extension ID3v2Tag {
    /// A tag up to this size is shown to libmpg123 as it is (it reads it whole, as it always
    /// did); a bigger one is shown without the frames libmpg123 does not read, and with at most
    /// this many bytes of the frames it does.
    static let wholeTagLimit: Int64 = 1 << 20

    /// The frames libmpg123 reads without `MPG123_PICTURE` (its `KNOWN_FRAMES` and text
    /// frames; `COM` is v2.2's comment). Pictures, private data, objects are not among them.
    static func isReadByLibmpg123(_ id: String) -> Bool {
        id.hasPrefix("T") || id == "COMM" || id == "USLT" || id == "RVA2" || id == "COM"
    }

    /// What to show libmpg123 in place of the file's first `tagEnd` bytes, or nil to show the
    /// file as it is (no tag, or one within ``wholeTagLimit``).
    ///
    /// The tag shown is rebuilt: the same version and flags (without extended header and
    /// footer), and the frames libmpg123 reads, byte for byte, in the file's order, while they
    /// fit in ``wholeTagLimit``. So the tags libmpg123 reports are those of the file, the update
    /// and every open of the file cost at most a megabyte for the tag, and the audio after it is
    /// read from the file where it is.
    static func slimmed(_ file: BufferedFile) -> (head: [UInt8], tagEnd: Int64)? {
        let tag: ID3v2Tag
        do throws(Failure) {
            guard let found = try read(file), found.end > wholeTagLimit else { return nil }
            tag = found
        } catch .tagBeyondFile(let tagEnd, _) {
            // libmpg123 would allocate what the header claims and find no audio after it: show it no tag and no audio.
            return tagEnd > wholeTagLimit ? ([], tagEnd) : nil
        } catch {
            return nil
        }
        var kept: [(offset: Int64, count: Int)] = []
        var budget = wholeTagLimit
        // A failure ends the walk; the frames before it are kept, as libmpg123 keeps them.
        try? tag.walk(file) { frame in
            let count = Int64(frame.headerSize) + frame.size
            if isReadByLibmpg123(frame.id) && count <= budget {
                kept.append((frame.offset, Int(count)))
                budget -= count
            }
            return true
        }
        var frames: [UInt8] = []
        for range in kept {
            guard let bytes = file.read(at: range.offset, count: range.count), bytes.count == range.count else { break }
            frames += bytes
        }
        let size = frames.count
        let sizeBytes = (0..<4).reversed().map { UInt8(truncatingIfNeeded: size >> (7 * $0)) & 0x7F }
        let header = Array("ID3".utf8) + [tag.major, tag.revision, tag.flags & ~0x50] + sizeBytes
        return (header + frames, tag.end)
    }
}

import AllocationCounter
import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// The ID3v2 frame walker (``ID3v2Tag``), the picture it locates (``ID3Picture``) and the tag
/// libmpg123 is shown (``ID3v2Tag/slimmed(_:)``), on tags written by mutagen and built by hand
/// in front of a real MP3 stream: where the picture lies, its bytes read by offset, and sizes
/// that claim more than there is refused without allocating them.
@Suite struct ID3v2TagTests {
    /// A tone of one second, lame's frames only (no tag of its own), shared by the tests.
    static let tone: [UInt8] = {
        let directory = try! TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try! TestMedia.makeTone(seconds: 1, in: directory, name: "tone")
        return Array(try! Data(contentsOf: url))
    }()

    @Test(arguments: [UInt8(3), 4])
    func findsThePictureBehindTextFramesAnExtendedHeaderAndBeforePadding(major: UInt8) throws {
        let picture = TagBuilder.pseudoRandom(70_000, seed: UInt64(major))
        let frames = [TagBuilder.frame("TIT2", TagBuilder.text("Title"), major: major),
                      TagBuilder.frame("TPE1", TagBuilder.text("Artist"), major: major),
                      TagBuilder.frame("TXXX", TagBuilder.text("MusicBrainz Album Id\u{0}abc"), major: major),
                      TagBuilder.frame("APIC", TagBuilder.apic(mime: "image/png", type: 3, description: "front", picture), major: major),
                      TagBuilder.frame("TALB", TagBuilder.text("After"), major: major)]
        let tag = TagBuilder.tag(major: major, extendedHeader: true, frames: frames, padding: 500)
        let file = try ScratchFile(tag + Self.tone)
        defer { file.remove() }

        let opened = try BufferedFile.open(file.url)
        let found = try #require(try ID3v2Tag.read(opened))
        #expect(found.major == major && found.end == Int64(tag.count))
        var seen: [ID3v2Tag.Frame] = []
        try found.walk(opened) { seen.append($0); return true }
        #expect(seen.map(\.id) == ["TIT2", "TPE1", "TXXX", "APIC", "TALB"], "the padding ends the walk")
        // The first frame follows the 10-byte header and the 10- (v2.3) or 6-byte (v2.4) extended header.
        #expect(seen.first?.offset == (major == 3 ? 20 : 16))
        let apic = try #require(seen.first { $0.id == "APIC" })
        #expect(apic.size == Int64(frames[3].count - 10))

        let located = try #require(try ID3Picture.first(in: file.url))
        let pictureHeader = 1 + "image/png".utf8.count + 1 + 1 + "front".utf8.count + 1
        #expect(located.mimeType == "image/png" && located.type == 3 && located.length == picture.count)
        #expect(located.location == .file(offset: apic.dataOffset + Int64(pictureHeader)))
        #expect(try Self.readWhole(located, from: file.url, chunk: 8192) == picture)
    }

    @Test(arguments: ["3", "4"])
    func findsThePictureOfAMutagenTag(version: String) throws {
        let picture = TagBuilder.pseudoRandom(200_000, seed: 7)
        let file = try ScratchFile(Self.tone)
        defer { file.remove() }
        let pictureFile = try ScratchFile(picture)
        defer { pictureFile.remove() }
        try TestMedia.run("/usr/bin/python3", ["-c", """
            import sys
            from mutagen import id3
            tag = id3.ID3()
            tag.add(id3.TIT2(encoding=1, text="Tïtle"))
            tag.add(id3.TPE1(encoding=3, text="Ône"))
            tag.add(id3.TXXX(encoding=3, desc="note", text="x" * 3000))
            tag.add(id3.APIC(encoding=1, mime="image/jpeg", type=3, desc="Cöver", data=open(sys.argv[2], "rb").read()))
            tag.save(sys.argv[1], v1=0, v2_version=int(sys.argv[3]))
            """, file.url.path, pictureFile.url.path, version])

        let located = try #require(try ID3Picture.first(in: file.url))
        #expect(located.mimeType == "image/jpeg" && located.type == 3 && located.length == picture.count)
        guard case .file(let offset) = located.location else {
            Issue.record("mutagen does not unsynchronise: \(located.location)")
            return
        }
        let bytes = Array(try Data(contentsOf: file.url))
        #expect(Array(bytes[Int(offset)..<Int(offset) + picture.count]) == picture, "the picture lies at the offset found")
        #expect(try Self.readWhole(located, from: file.url, chunk: 65_536) == picture)
        // What libmpg123 reads of the same tag agrees: the text frames are all there.
        let decoder = try MPG123Decoder(url: file.url)
        #expect(decoder.id3.values(of: "TIT2") == ["Tïtle"] && decoder.id3.values(of: "TPE1") == ["Ône"])
    }

    @Test func resynchronisesAnUnsynchronisedPicture() throws {
        // Bytes an MPEG sync search would mistake: FF E0.., FF 00, and FF at the end.
        let picture: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0xFF, 0x00, 0x42] + TagBuilder.pseudoRandom(5000, seed: 3) + [0xFF]
        let data = TagBuilder.apic(mime: "image/jpeg", type: 3, description: "", picture)
        // Unsynchronisation: a 00 after every FF (what resynchronising removes again).
        let unsynchronised = data.flatMap { $0 == 0xFF ? [0xFF, 0x00] : [$0] }
        let frames = [TagBuilder.frame("TIT2", TagBuilder.text("Title"), major: 3),
                      TagBuilder.frame("APIC", unsynchronised, major: 3)]
        let file = try ScratchFile(TagBuilder.tag(major: 3, flags: 0x80, frames: frames) + Self.tone)
        defer { file.remove() }

        let located = try #require(try ID3Picture.first(in: file.url))
        #expect(located.length == picture.count && located.mimeType == "image/jpeg")
        guard case .unsynchronised = located.location else {
            Issue.record("\(located.location)")
            return
        }
        #expect(try Self.readWhole(located, from: file.url, chunk: 777) == picture)
    }

    @Test func refusesSizesThatClaimMoreThanThereIsWithoutAllocatingThem() throws {
        // A frame that claims 2 GB in a tag of a few hundred bytes (v2.3 sizes are plain).
        var frames = [TagBuilder.frame("TIT2", TagBuilder.text("Title"), major: 3),
                      TagBuilder.frame("APIC", TagBuilder.apic(mime: "image/png", type: 3, description: "", [1, 2, 3]), major: 3)]
        frames[1].replaceSubrange(4..<8, with: [0x7F, 0xFF, 0xFF, 0xF0])
        let frameTooBig = try ScratchFile(TagBuilder.tag(major: 3, frames: frames, padding: 100) + Self.tone)
        defer { frameTooBig.remove() }
        // A tag that claims 256 MB (the most a syncsafe size holds) in a file of a few kB.
        var tagTooBig = TagBuilder.tag(major: 4, frames: [TagBuilder.frame("APIC", [0, 0x41, 0, 3, 0, 1], major: 4)]) + Self.tone
        tagTooBig.replaceSubrange(6..<10, with: [0x7F, 0x7F, 0x7F, 0x7F])
        let tagFile = try ScratchFile(tagTooBig)
        defer { tagFile.remove() }

        _ = allocation_largest_this_thread()
        let opened = try BufferedFile.open(frameTooBig.url)
        let tag = try #require(try ID3v2Tag.read(opened))
        var seen: [String] = []
        #expect(throws: ID3v2Tag.Failure.frameBeyondTag(id: "APIC", frameEnd: Int64(10 + frames[0].count + 10 + 0x7FFF_FFF0),
                                                        tagEnd: tag.framesEnd)) {
            try tag.walk(opened) { seen.append($0.id); return true }
        }
        #expect(seen == ["TIT2"], "the frames before the bad one are passed on")
        #expect(try ID3Picture.first(in: frameTooBig.url) == nil, "no picture, as libmpg123 gave none")
        #expect(try MPG123Decoder(url: frameTooBig.url).id3.values(of: "TIT2") == ["Title"], "the file still plays, with its title")

        let claiming = try BufferedFile.open(tagFile.url)
        #expect(throws: ID3v2Tag.Failure.tagBeyondFile(tagEnd: 10 + 0x0FFF_FFFF, fileSize: Int64(tagTooBig.count))) {
            try ID3v2Tag.read(claiming)
        }
        #expect("\(ID3v2Tag.Failure.tagBeyondFile(tagEnd: 268_435_465, fileSize: 4000))"
                == "the ID3v2 tag claims 268435465 bytes, the file has 4000")
        #expect(throws: DecoderError.self, "no audio after a tag that covers the file") { try ID3Picture.first(in: tagFile.url) }
        let largest = allocation_largest_this_thread()
        #expect(largest < 4 << 20, "largest allocation \(largest) bytes")
    }

    @Test func libmpg123IsShownABigTagWithoutItsPicture() throws {
        let frames = { (picture: [UInt8]) in
            [TagBuilder.frame("TIT2", TagBuilder.text("Big Title"), major: 4),
             TagBuilder.frame("APIC", TagBuilder.apic(mime: "image/png", type: 3, description: "", picture), major: 4),
             TagBuilder.frame("TPE1", TagBuilder.text("After the picture"), major: 4),
             TagBuilder.frame("TXXX", TagBuilder.text("replaygain_track_gain\u{0}-6.5 dB"), major: 4)]
        }
        let small = try ScratchFile(TagBuilder.tag(major: 4, frames: frames([1, 2, 3]), padding: 1000) + Self.tone)
        defer { small.remove() }
        let bigPicture = TagBuilder.pseudoRandom(16 << 20, seed: 9)
        let big = try ScratchFile(TagBuilder.tag(major: 4, frames: frames(bigPicture), padding: 1000) + Self.tone)
        defer { big.remove() }

        let opened = try BufferedFile.open(big.url)
        let view = try #require(ID3v2Tag.slimmed(opened))
        #expect(view.head.count < 200 && view.tagEnd == Int64(big.count - Self.tone.count))
        #expect(ID3v2Tag.slimmed(try BufferedFile.open(small.url)) == nil, "a tag within 1 MiB is shown as it is")

        let reference = try MPG123Decoder(url: small.url)
        _ = allocation_largest_this_thread()
        let decoder = try MPG123Decoder(url: big.url)
        let largest = allocation_largest_this_thread()
        #expect(largest < 2 << 20, "opening allocated \(largest) bytes at once")
        #expect(decoder.id3 == reference.id3 && decoder.id3.values(of: "TPE1") == ["After the picture"])
        #expect(decoder.frameCount == reference.frameCount && decoder.frameCount > 40_000)
        // The audio decodes the same, from a view of the file that leaves the picture out.
        #expect(try Self.decodeAll(decoder) == Self.decodeAll(reference))

        let located = try #require(try ID3Picture.first(in: big.url))
        #expect(located.length == bigPicture.count)
        _ = allocation_largest_this_thread()
        let chunk = try located.read(from: big.url, at: 10_000_000, count: 8192)
        #expect(allocation_largest_this_thread() < 64 << 10, "a chunk costs the chunk")
        #expect(chunk == Array(bigPicture[10_000_000..<10_008_192]))
    }

    // MARK: - Helpers

    static func readWhole(_ picture: ID3Picture, from url: URL, chunk: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < picture.length {
            let piece = try picture.read(from: url, at: bytes.count, count: chunk)
            guard !piece.isEmpty else { break }
            bytes += piece
        }
        return bytes
    }

    static func decodeAll(_ decoder: any Decoder) throws -> [UInt8] {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096 * decoder.format.bytesPerFrame)
        while true {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0, maximumFrames: 4096) }
            if frames == 0 { return all }
            all += buffer.prefix(frames * decoder.format.bytesPerFrame)
        }
    }
}

/// ID3v2 tags built byte by byte.
enum TagBuilder {
    static func syncsafe(_ value: Int) -> [UInt8] {
        (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (7 * $0)) & 0x7F }
    }

    static func plain(_ value: Int) -> [UInt8] {
        (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A frame: id, size (plain in v2.3, syncsafe in v2.4), flags, data.
    static func frame(_ id: String, _ data: [UInt8], major: UInt8, flags: UInt16 = 0) -> [UInt8] {
        Array(id.utf8) + (major == 4 ? syncsafe(data.count) : plain(data.count)) + [UInt8(flags >> 8), UInt8(flags & 0xFF)] + data
    }

    /// A tag of `frames`, with an empty extended header if asked and `padding` zeros.
    static func tag(major: UInt8, flags: UInt8 = 0, extendedHeader: Bool = false, frames: [[UInt8]], padding: Int = 0) -> [UInt8] {
        // v2.3: size 6 without itself, 2 flag bytes, 4 bytes of padding size; v2.4: size 6 with itself, 1 flag byte, no flags.
        let extended: [UInt8] = !extendedHeader ? [] : major == 3 ? [0, 0, 0, 6, 0, 0, 0, 0, 0, 0] : [0, 0, 0, 6, 1, 0]
        let body = extended + frames.flatMap { $0 } + [UInt8](repeating: 0, count: padding)
        return Array("ID3".utf8) + [major, 0, flags | (extendedHeader ? 0x40 : 0)] + syncsafe(body.count) + body
    }

    /// A text frame's data in UTF-8.
    static func text(_ value: String) -> [UInt8] { [3] + Array(value.utf8) }

    /// An APIC frame's data: UTF-8 description.
    static func apic(mime: String, type: UInt8, description: String, _ picture: [UInt8]) -> [UInt8] {
        [3] + Array(mime.utf8) + [0, type] + Array(description.utf8) + [0] + picture
    }

    static func pseudoRandom(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    }
}

/// A file in a scratch directory of its own, with the given bytes.
struct ScratchFile {
    let url: URL
    let count: Int

    init(_ bytes: [UInt8]) throws {
        url = try TestMedia.scratchDirectory().appendingPathComponent("file.mp3")
        count = bytes.count
        try Data(bytes).write(to: url)
    }

    func remove() { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
}

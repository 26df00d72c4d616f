import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A 250 MB embedded picture (a daemon that kept it whole would grow by its size at
/// `update`, and `readpicture` kept it whole): the daemon's peak resident set after updating
/// a directory that holds one, and after reading chunks of it, stays within 16 MB of the
/// same daemon's figure with a normal picture; the chunks are the file's bytes at the
/// picture's offset.
@Suite(.serialized) struct PictureMemoryTests {
    @Test func a250MBPictureKeepsThePeakWithin16MBOfASmallOnes() throws {
        let root = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let music = root.appendingPathComponent("music")
        for directory in ["Small", "Big"] {
            try FileManager.default.createDirectory(at: music.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        let tone = Array(try Data(contentsOf: TestMedia.makeTone(seconds: 2, in: root, name: "tone")))
        let smallPicture = TaggedLibrary.bytes(5000, seed: 1)
        let small = SparsePictureFile.header(title: "Small", pictureLength: smallPicture.count)
        try Data(small + smallPicture + tone).write(to: music.appendingPathComponent("Small/small.mp3"))

        let daemon = try ControlDaemon(["--music-directory", music.path])
        defer { daemon.stop() }
        let deadline = ChildProcess.now() + 20
        while (try? daemon.mpc("listall"))?.stdout.count != 1 && ChildProcess.now() < deadline { usleep(50_000) }
        let client = try daemon.client()

        // The usual figure: an update and the small picture read, as a client reads it.
        try Self.update(client)
        #expect(try Self.readWhole(client, "Small/small.mp3") == smallPicture)
        let usual = try #require(daemon.peakResidentKilobytes)

        let big = try SparsePictureFile(music.appendingPathComponent("Big/big.mp3"), pictureLength: 250_000_000, audio: tone)
        try Self.update(client)
        #expect(try client.request("find file Big/big.mp3").contains("Title: Big"), "the update read the big file's tag")
        let afterUpdate = try #require(daemon.peakResidentKilobytes)

        for limit in [8192, 1 << 20] {
            #expect(try client.request("binarylimit \(limit)") == ["OK"])
            for offset in [0, 99_999_000, 150_000_000, 250_000_000 - 5000] {
                let reply = try client.binaryReply("readpicture Big/big.mp3 \(offset)", timeout: 10)
                #expect(reply.lines == ["size: 250000000", "type: image/jpeg"])
                let expected = try big.pictureBytes(at: offset, count: min(limit, 250_000_000 - offset))
                #expect(reply.payload == expected, "offset \(offset), limit \(limit): \(reply.payload.count) bytes")
            }
            // Alternating with another picture costs nothing either: only where each lies is kept.
            #expect(try client.binaryReply("readpicture Small/small.mp3 0").payload == Array(smallPicture.prefix(limit)))
        }
        #expect(try client.request("readpicture Big/big.mp3 250000001") == ["ACK [2@0] {readpicture} Bad file offset"])
        #expect(try client.binaryReply("readpicture Big/big.mp3 250000000").payload.isEmpty)
        let afterReading = try #require(daemon.peakResidentKilobytes)

        #expect(afterUpdate - usual <= 16 * 1024, "peak RSS \(usual) kB with the small picture, \(afterUpdate) kB after updating the big one")
        #expect(afterReading - usual <= 16 * 1024, "peak RSS \(usual) kB with the small picture, \(afterReading) kB after reading chunks of the big one")
        print("PictureMemoryTests: peak RSS \(usual) kB usual, \(afterUpdate) kB after the update, \(afterReading) kB after reading chunks")
    }

    /// Runs `update` and waits for it to end (`status` without `updating_db`).
    static func update(_ client: UnixSocketClient) throws {
        let reply = try client.request("update")
        #expect(reply.count == 2 && reply[1] == "OK", "\(reply)")
        #expect(waitUntil(timeout: 30) { (try? client.request("status"))?.contains { $0.hasPrefix("updating_db:") } == false },
                "the update did not end within 30 s")
    }

    /// The whole embedded picture of `uri`, chunk by chunk at the session's `binarylimit`.
    static func readWhole(_ client: UnixSocketClient, _ uri: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let reply = try client.binaryReply("readpicture \(uri) \(bytes.count)")
            bytes += reply.payload
            if reply.payload.isEmpty || reply.lines.contains("size: \(bytes.count)") { return bytes }
        }
    }
}

/// An MP3 file whose ID3v2.4 tag holds a title and a picture of `pictureLength` bytes, made
/// without writing them: the picture is a hole in the file (zeros) with pseudo-random marks
/// at a few places, so the bytes a chunk must hold differ from place to place.
struct SparsePictureFile {
    let url: URL
    /// Where the picture's bytes start in the file.
    let pictureStart: Int

    /// The tag's bytes up to the picture's first byte.
    static func header(title: String, pictureLength: Int) -> [UInt8] {
        func syncsafe(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (7 * $0)) & 0x7F } }
        let text: [UInt8] = [3] + Array(title.utf8)
        let titleFrame = Array("TIT2".utf8) + syncsafe(text.count) + [0, 0] + text
        let pictureHeader: [UInt8] = [3] + Array("image/jpeg".utf8) + [0, 3] + Array("cover".utf8) + [0]
        let pictureFrame = Array("APIC".utf8) + syncsafe(pictureHeader.count + pictureLength) + [0, 0] + pictureHeader
        let size = titleFrame.count + pictureFrame.count + pictureLength
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(size) + titleFrame + pictureFrame
    }

    init(_ url: URL, pictureLength: Int, audio: [UInt8]) throws {
        self.url = url
        let header = Self.header(title: "Big", pictureLength: pictureLength)
        pictureStart = header.count
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw UnixSocketError("open \(url.path): \(errno)") }
        defer { close(descriptor) }
        var generator = SplitMix64(seed: 33)
        var pieces: [(offset: Int, bytes: [UInt8])] = [(0, header), (pictureStart + pictureLength, audio)]
        for mark in [0, 100_000_000 - 64 << 10, 150_000_000, pictureLength - 64 << 10] {
            pieces.append((pictureStart + mark, (0..<(64 << 10)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }))
        }
        for piece in pieces {
            let written = piece.bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(piece.offset)) }
            guard written == piece.bytes.count else { throw UnixSocketError("pwrite \(url.path): \(errno)") }
        }
    }

    /// `count` bytes of the picture from `offset`, as the file holds them.
    func pictureBytes(at offset: Int, count: Int) throws -> [UInt8] {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(pictureStart + offset))
        return Array(try handle.read(upToCount: count) ?? Data())
    }
}

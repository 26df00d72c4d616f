import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A music directory of four tagged files, made at test time: a tone encoded by lame,
/// tagged by mutagen (`Scripts/tag_mp3.py`), and the pictures (pseudo-random bytes that
/// include newlines, NULs and `OK`, so that any framing by lines would break them).
public struct TaggedLibrary {
    public let root: URL
    public let music: URL
    public let tone: URL
    /// The embedded picture of Album/01.mp3 (5,000 bytes).
    public let picture: [UInt8]
    /// Album/cover.jpg (10,000 bytes).
    public let cover: [UInt8]

    static let tagScript = TranscriptLibrary.scripts.appendingPathComponent("tag_mp3.py")

    public init() throws {
        root = try TestMedia.scratchDirectory()
        music = root.appendingPathComponent("music")
        for directory in ["Album", "Other"] {
            try FileManager.default.createDirectory(at: music.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        tone = try TestMedia.makeTone(seconds: 1, in: root, name: "tone")
        picture = Self.bytes(5000, seed: 1)
        cover = Self.bytes(10_000, seed: 2)
        let pictureFile = root.appendingPathComponent("picture.bin")
        try Data(picture).write(to: pictureFile)
        try Data(cover).write(to: music.appendingPathComponent("Album/cover.jpg"))

        for name in ["Album/01.mp3", "Album/02.mp3", "Other/03.mp3", "Other/04.mp3"] { try copyTone(to: name) }
        try tag("Album/01.mp3", "TPE1=Solo Artist", "TPE2=Various Artists", "TCOM=J. S. Bach", "TPOS=1/2", "TRCK=03/12",
                "TIT2=First", "TALB=Tagged Album", "TDRC=2021-05-04", "TCON=Baroque",
                "TXXX:MusicBrainz Album Id=0f2b6b4e-album", "APIC=image/jpeg:\(pictureFile.path)")
        try tag("Album/02.mp3", "TPE1=Choir", "TPE2=Various Artists", "TCOM=Hildegard von Bingen", "TPOS=2/2", "TRCK=1",
                "TIT2=Second", "TALB=Tagged Album", "TDRC=2021")
        try tag("Other/03.mp3", "--v23", "TPE1=Old", "TDRC=1999", "TRCK=07/10", "TPOS=2", "TCOM=Arvo Pärt")
        try tag("Other/04.mp3", "--v1", "TPE1=V One", "TIT2=Only v1", "TALB=V1 Albüm", "TDRC=1987", "TRCK=4")
    }

    public func copyTone(to name: String) throws {
        try FileManager.default.copyItem(at: tone, to: music.appendingPathComponent(name))
    }

    /// Replaces the tag of `name` (see `tag_mp3.py` for the arguments).
    public func tag(_ name: String, _ arguments: String...) throws {
        try TestMedia.run("/usr/bin/python3", [Self.tagScript.path, music.appendingPathComponent(name).path] + arguments)
    }

    /// Deterministic bytes that start like a JPEG file and hold every byte value.
    public static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x0A, 0x00] + Array("\nOK\n".utf8)
        while bytes.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        return bytes
    }
}

/// A file's size and modification time, to the nanosecond.
public struct FileStatus {
    public let size: Int64
    public let seconds: Int
    public let nanoseconds: Int

    public init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
    }
}

extension UnixSocketClient {
    /// Sends `command` and reads a binary reply: its lines before `binary: N`, and the N
    /// bytes after it (followed by a newline and `OK`).
    public func binaryReply(_ command: String, timeout: Double = 5) throws -> (lines: [String], payload: [UInt8]) {
        try send(command + "\n")
        var lines: [String] = []
        while true {
            guard let line = try readLine(timeout: timeout) else { throw UnixSocketError("end of file after \(lines)") }
            if line.hasPrefix("ACK ") { throw UnixSocketError(line) }
            if let count = line.wholeMatch(of: /binary: (\d+)/).flatMap({ Int($0.1) }) {
                var received: [UInt8] = []
                let deadline = ChildProcess.now() + timeout
                while received.count < count + 4, ChildProcess.now() < deadline {
                    if case .data(let bytes) = receive(timeout: max(0.001, deadline - ChildProcess.now())) { received += bytes }
                }
                guard received.count == count + 4, received.suffix(4) == Array("\nOK\n".utf8) else {
                    throw UnixSocketError("binary: \(count), then \(received.count) bytes, not ending in a newline and OK")
                }
                return (lines, Array(received.prefix(count)))
            }
            lines.append(line)
        }
    }
}

/// The tagged library with folders of covers beside its songs: "Artist - Album" holds all
/// three names (the PNG is sent), "Webp Only" the last, "Empty" none, "Linked" is a link
/// to a folder outside the music directory that holds a cover, and "Escaping" holds a
/// `cover.png` that links out (skipped) beside a `cover.jpg` of its own.
public struct CoverFolders {
    public let library: TaggedLibrary
    public let png = TaggedLibrary.bytes(3_000, seed: 3)
    public let jpg = TaggedLibrary.bytes(4_000, seed: 4)
    public let webp = TaggedLibrary.bytes(5_000, seed: 5)

    public init() throws {
        library = try TaggedLibrary()
        let music = library.music
        func folder(_ name: String, _ files: [String: [UInt8]]) throws {
            let directory = music.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (file, bytes) in files { try Data(bytes).write(to: directory.appendingPathComponent(file)) }
        }
        try folder("Artist - Album", ["cover.jpg": jpg, "cover.webp": webp, "cover.png": png])
        try folder("Webp Only", ["cover.webp": webp])
        try folder("Empty", [:])
        let outside = library.root.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data(png).write(to: outside.appendingPathComponent("cover.png"))
        try FileManager.default.createSymbolicLink(at: music.appendingPathComponent("Linked"), withDestinationURL: outside)
        try folder("Escaping", ["cover.jpg": jpg])
        try FileManager.default.createSymbolicLink(at: music.appendingPathComponent("Escaping/cover.png"),
                                                   withDestinationURL: outside.appendingPathComponent("cover.png"))
    }
}

import Foundation
import QueuePlayer
import TestSupport
import Testing
@testable import DaemonCore

/// The details `update` and `add` keep per file hold while the file is the same version, and
/// are read again when it is another: rewritten, replaced, or touched by a nanosecond.
@Suite struct SongIndexTests {
    @Test func aFilesVersionIsItsOwnToTheNanosecondAndStableWhileUntouched() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.mp3")
        try FileManager.default.copyItem(at: TestMedia.all[0], to: file)
        try TestMedia.setModificationTime(file.path, seconds: 1_700_000_000, nanoseconds: 123_456_789)

        let version = try #require(FileIdentity(path: file.path))
        #expect(version.modified == 1_700_000_000_123_456_789)
        #expect(FileIdentity(path: file.path) == version)
        #expect(FileIdentity(path: directory.appendingPathComponent("missing.mp3").path) == nil)
    }

    @Test func detailsAreReadAgainForEachNewVersionOfTheFile() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (first, second) = (TestMedia.all[0], TestMedia.all[1])
        let firstLength = Double(try TestMedia.frameCount(first)) / 44_100
        let secondLength = Double(try TestMedia.frameCount(second)) / 44_100
        #expect(abs(firstLength - secondLength) > 0.5, "the two items must tell apart by length")
        let file = directory.appendingPathComponent("song.mp3")
        let index = SongIndex()

        try FileManager.default.copyItem(at: first, to: file)
        try TestMedia.setModificationTime(file.path, seconds: 1_700_000_000, nanoseconds: 0)
        #expect(try #require(index.details(of: file)).duration == firstLength)

        // Another song in its place, a nanosecond later.
        try Self.replace(file, with: second)
        try TestMedia.setModificationTime(file.path, seconds: 1_700_000_000, nanoseconds: 1)
        #expect(try #require(index.details(of: file)).duration == secondLength)

        // The first song back under the very same modification time (as `cp -p` or a restore
        // from a backup leaves it): another file all the same.
        try Self.replace(file, with: first)
        try TestMedia.setModificationTime(file.path, seconds: 1_700_000_000, nanoseconds: 1)
        #expect(try #require(index.details(of: file)).duration == firstLength)
    }

    static func replace(_ file: URL, with source: URL) throws {
        try FileManager.default.removeItem(at: file)
        try FileManager.default.copyItem(at: source, to: file)
    }
}

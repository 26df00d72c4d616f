import Foundation
import TestSupport
import Testing
@testable import queueplayerd

/// The details `update` and `add` keep per file hold while the file's modification time is
/// unchanged, and are read again when it changes (to the nanosecond, as `stat(2)` has it).
@Suite struct SongIndexTests {
    @Test func theModificationTimeIsTheFilesOwnToTheNanosecond() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.mp3")
        try FileManager.default.copyItem(at: TestMedia.all[0], to: file)
        try Self.setModificationTime(file, seconds: 1_700_000_000, nanoseconds: 123_456_789)

        #expect(SongIndex.modificationTime(of: file) == 1_700_000_000_123_456_789)
        #expect(SongIndex.modificationTime(of: directory.appendingPathComponent("missing.mp3")) == nil)
    }

    @Test func detailsAreReadAgainWhenTheModificationTimeChangesAndNotOtherwise() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (first, second) = (TestMedia.all[0], TestMedia.all[1])
        let firstLength = Double(try TestMedia.frameCount(first)) / 44_100
        let secondLength = Double(try TestMedia.frameCount(second)) / 44_100
        #expect(abs(firstLength - secondLength) > 0.5, "the two items must tell apart by length")
        let file = directory.appendingPathComponent("song.mp3")
        let index = SongIndex()

        try FileManager.default.copyItem(at: first, to: file)
        try Self.setModificationTime(file, seconds: 1_700_000_000, nanoseconds: 0)
        #expect(try #require(index.details(of: file)).duration == firstLength)

        // Another song in its place, a nanosecond later: read again.
        try Self.replace(file, with: second)
        try Self.setModificationTime(file, seconds: 1_700_000_000, nanoseconds: 1)
        #expect(try #require(index.details(of: file)).duration == secondLength)

        // The first song back under the same time: the index answers what it holds for that version.
        try Self.replace(file, with: first)
        try Self.setModificationTime(file, seconds: 1_700_000_000, nanoseconds: 1)
        #expect(try #require(index.details(of: file)).duration == secondLength)
    }

    static func replace(_ file: URL, with source: URL) throws {
        try FileManager.default.removeItem(at: file)
        try FileManager.default.copyItem(at: source, to: file)
    }

    static func setModificationTime(_ file: URL, seconds: Int, nanoseconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        let result = utimensat(AT_FDCWD, file.path, &times, 0)
        try #require(result == 0, "utimensat \(file.path): errno \(errno)")
    }
}

import Dispatch
@testable import FeedFetch
import Foundation
import TestSupport
import Testing

/// The `.part` file an attempt keeps open (``PartFile``): written in place, never taken as
/// finished once it is gone, never spliced when it cannot be emptied.
@Suite struct PartFileTests {
    let queue = DispatchQueue(label: "PartFileTests.io")

    @Test func chunksGoToTheEndOfTheFileAndAreMadeDurable() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Made with its directory, and appended to where a resumed attempt left off.
        let url = directory.appendingPathComponent("feed/episode.mp3.part")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("abc".utf8).write(to: url)
        let file = PartFile(url: url, queue: queue)
        try queue.sync {
            try file.append(Data("def".utf8))
            try file.append(Data("gh".utf8))
            try file.synchronize()
            file.close()
        }
        #expect(try Data(contentsOf: url) == Data("abcdefgh".utf8))
    }

    /// Removed by hand while open (with its directory, say): the bytes went to a file that is no
    /// longer there, so the attempt is not finished (it is tried again from the start).
    @Test func aFileRemovedWhileOpenIsNotFinished() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("episode.mp3.part")
        let file = PartFile(url: url, queue: queue)
        try queue.sync { try file.append(Data("abc".utf8)) }
        try FileManager.default.removeItem(at: url)
        #expect(throws: (any Error).self) { try queue.sync { try file.synchronize() } }
        // Replaced by another file of the same name: not the one written either.
        try queue.sync { file.close() }
        try queue.sync { try file.append(Data("abc".utf8)) }
        try FileManager.default.removeItem(at: url)
        try Data("xyz".utf8).write(to: url)
        #expect(throws: (any Error).self) { try queue.sync { try file.synchronize() } }
        queue.sync { file.close() }
    }

    @Test func emptyingStartsTheFileOverAndAFileThatCannotBeEmptiedIsAnError() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("episode.mp3.part")
        let file = PartFile(url: url, queue: queue)
        try queue.sync {
            try file.truncate()  // not there yet: empty already
            try file.append(Data("old".utf8))
            try file.truncate()
            try file.append(Data("new".utf8))
            file.close()
        }
        #expect(try Data(contentsOf: url) == Data("new".utf8))
        // A directory in its place cannot be emptied: an error, not a silent splice.
        let blocked = PartFile(url: directory, queue: queue)
        #expect(throws: (any Error).self) { try queue.sync { try blocked.truncate() } }
    }
}

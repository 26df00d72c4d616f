import DaemonCore
import Foundation
import TestSupport
import Testing

/// `--once` ends the daemon when the queue has finished, whether its items played or failed:
/// an item that cannot be opened never becomes the current item, so the end cannot wait for a
/// current item to go.
@Suite struct OnceWithFailingItemsTests {
    /// A file that is not MPEG audio (an HTML page saved under an .mp3 name).
    static func page(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("page.mp3")
        try Data("<!doctype html><html><body>not audio</body></html>\n".utf8).write(to: url)
        return url
    }

    @Test func aQueueOfItemsThatAllFailEndsTheDaemon() throws {
        let media = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: media) }
        let page = try Self.page(in: media)
        let daemon = try InProcessDaemon {
            $0.files = [page.path, page.path]
            $0.once = true
        }
        defer { _ = daemon.stop() }
        #expect(daemon.waitForEnd(timeout: 20) == true, "still running; log: \(daemon.standardError)")
        #expect(daemon.standardError.contains("cannot play"), "\(daemon.standardError)")
        #expect(daemon.standardError.contains("the queue has finished"), "\(daemon.standardError)")
    }

    @Test func anItemAfterAFailedOneStillPlaysBeforeTheEnd() throws {
        let media = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: media) }
        let page = try Self.page(in: media)
        let tone = try TestMedia.makeTone(seconds: 0.5, in: media, name: "tone")
        let daemon = try InProcessDaemon {
            $0.files = [page.path, tone.path]
            $0.once = true
        }
        defer { _ = daemon.stop() }
        #expect(daemon.waitForEnd(timeout: 20) == true, "still running; log: \(daemon.standardError)")
        #expect(daemon.lines.map(\.text) == ["Now playing: \(tone.lastPathComponent)"], "\(daemon.lines.map(\.text))")
        #expect(daemon.standardError.contains("the queue has finished"), "\(daemon.standardError)")
    }
}

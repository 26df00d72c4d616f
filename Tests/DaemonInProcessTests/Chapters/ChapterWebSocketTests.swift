import Foundation
import TestSupport
import Testing

/// The WebSocket's `chapters` and `chapter` events, and `chapters`/`seekchapter` through it,
/// driven by Python's `websockets` (`Scripts/ws_chapters.py`) against the daemon in process.
@Suite("chapters over the WebSocket", .serialized)
struct ChapterWebSocketTests {
    @Test func theListAndTheChapterHeardArePushed() throws {
        let music = try ChapterCommandTests.library()
        defer { try? FileManager.default.removeItem(at: music) }
        try FileManager.default.removeItem(at: music.appendingPathComponent("plain.mp3"))
        let daemon = try InProcessWebDaemon { $0.media = music.path }
        defer { daemon.stop() }
        let steps = try daemon.run("chapters", script: "ws_chapters.py")
        let list = steps.object("list event")
        let chapters = list["chapters"] as? [[String: Any]] ?? []
        #expect(chapters.map { $0["title"] as? String } == ["Intro", "Middle", "End"], "\(list)")
        #expect(chapters.first?["url"] as? String == "https://example.com/intro")
        #expect(chapters.map { $0["start"] as? Double } == [0, 2, 4])
        let first = steps.object("first")
        #expect(first["title"] as? String == "Intro" && first["end"] as? Double == 2, "\(first)")
        let third = steps.object("third")
        #expect(third["title"] as? String == "End" && third["start"] as? Double == 4, "\(third)")
        let listed = steps["list"] as? [[String: Any]] ?? []
        #expect(listed.map { $0["chapter"] as? Int } == [1, 2, 3], "\(listed)")
        #expect(listed.map { $0["end"] as? Double } == [2, 4, 6], "numbers, as the events have them: \(listed)")
        let bad = steps.object("bad")
        #expect(bad["ack"] as? Int == 2 && (bad["message"] as? String)?.hasPrefix("No chapter 99") == true, "\(bad)")
    }
}

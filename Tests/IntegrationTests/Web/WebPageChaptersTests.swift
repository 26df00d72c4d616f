import Foundation
import TestSupport
import Testing

/// The web page's chapter list in headless chromium (`Scripts/web_page_chapters.py`): a 6 s
/// tone with three chapters written by mutagen plays; the page lists them, marks the one
/// heard, and a tap on the third seeks there.
@Suite(.serialized) struct WebPageChaptersTests {
    @Test func theChapterListShowsMarksAndSeeks() throws {
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let song = try TestMedia.makeTone(seconds: 6, in: music, name: "chapters")
        try ChapterFixtures.write([
            ChapterFixtures.Entry(id: "a", start: 0, end: 2_000, title: "Intro"),
            ChapterFixtures.Entry(id: "b", start: 2_000, end: 4_000, title: "Middle"),
            ChapterFixtures.Entry(id: "c", start: 4_000, end: 6_000, title: "End"),
        ], to: song)
        let daemon = try WebDaemon(media: ["--media", music.path])
        defer { daemon.stop() }
        try FileManager.default.createDirectory(at: WebPageTests.artifacts, withIntermediateDirectories: true)
        let shot = WebPageTests.artifacts.appendingPathComponent("web-page-chapters.png")
        let steps = try daemon.run(shot.path, script: "web_page_chapters.py", timeout: 120)
        #expect(steps["section shown"] as? Bool == true)
        #expect(steps["chapters"] as? [String] == ["Intro", "Middle", "End"])
        #expect(["Intro", "Middle"].contains(steps["current"] as? String ?? ""), "\(String(describing: steps["current"]))")
        #expect(steps["after tap"] as? String == "End")
        #expect((steps["console"] as? [Any])?.isEmpty == true, "console: \(String(describing: steps["console"]))")
    }
}

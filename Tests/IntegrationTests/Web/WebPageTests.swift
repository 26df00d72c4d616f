import Foundation
import TestSupport
import Testing

/// The web page in a real browser: Debian's chromium, headless, driven by selenium
/// (`Scripts/web_page.py`), one browser for every check. The screenshots are kept in
/// `.build/test-artifacts/` (outside every target's folder, so a later `swift build` finds no
/// unhandled file there) and their paths printed.
@Suite(.serialized) struct WebPageTests {
    static let artifacts = TestMedia.repository.appendingPathComponent(".build/test-artifacts")

    @Test func thePageShowsWhatPlaysAndItsControlsWork() throws {
        let daemon = try WebDaemon()
        defer { daemon.stop() }
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        let shot = Self.artifacts.appendingPathComponent("web-page.png")
        try? FileManager.default.removeItem(at: shot)
        let steps = try daemon.run(shot.path, script: "web_page.py", timeout: 120)
        let media = ControlSocketExpectations.media
        #expect(steps["title"] as? String == media[0].title)
        #expect(steps["artist"] as? String == ControlSocketExpectations.artist)
        #expect(steps["queue"] as? [String] == media.map(\.title))
        #expect(steps["current entry"] as? String == media[0].title)
        #expect((steps["outputs"] as? [String])?.count == 1)
        let widths = steps["widths"] as? [Double] ?? []
        #expect(widths.count == 20 && zip(widths.dropFirst(), widths).allSatisfy { $0 >= $1 }, "the bar never goes back: \(widths)")
        #expect(Set(widths).count >= 5, "the bar moves between ticks, frame by frame: \(widths)")
        let nextAfter = steps["next after"] as? Double
        #expect(nextAfter != nil && nextAfter! < 1, "Next changed the title after \(String(describing: nextAfter)) s")
        #expect(steps["title after next"] as? String == media[1].title)
        let seeked = steps["seeked to"] as? [Any] ?? []
        #expect(seeked.count == 2, "clicking the bar at 3/4 seeks there: \(seeked)")
        #expect(steps["played entry"] as? String == media[3].title)
        #expect(steps["pause and play"] as? Bool == true)
        #expect(steps["volume"] as? String == "35")
        #expect(steps["rate choices"] as? [String] == ["0.8", "1", "1.2", "1.5", "1.8", "2", "2.5", "3"])
        #expect(steps["rate shown"] as? String == "1.5")
        let paced = try daemon.control.status()
        #expect(paced["rate"] == "1.5" && paced["pitchalgorithm"] == "varispeed" && paced["skipsilence"] == "1",
                "the page's controls set the daemon's rate, pitch algorithm and skip silence: \(paced)")
        let itemTimePerSecond = steps["item time per second"] as? Double ?? 0
        #expect(itemTimePerSecond > 1.2 && itemTimePerSecond < 1.8, "the time shown moves at 1.5x: \(itemTimePerSecond)")
        let width = steps["page width"] as? [Int] ?? []
        #expect(width.count == 2 && width[0] <= width[1], "fits a phone's width: \(width)")
        #expect((steps["console"] as? [Any])?.isEmpty == true, "console: \(String(describing: steps["console"]))")
        #expect(FileManager.default.fileExists(atPath: shot.path))
        print("web page screenshot: \(shot.path)")
    }

    /// With a password and `--default-permissions ""` (nothing without a password), the page asks
    /// for the password, says when it is wrong, and shows everything after.
    @Test func aPasswordProtectedDaemonsPageAsksForThePasswordAndThenShowsWhatPlays() throws {
        let daemon = try WebDaemon(["--password", "s3cret@read,add,player,control,admin", "--default-permissions", ""])
        defer { daemon.stop() }
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        let shot = Self.artifacts.appendingPathComponent("web-page-login.png")
        try? FileManager.default.removeItem(at: shot)
        let steps = try daemon.run(shot.path, ["s3cret"], script: "web_page_login.py", timeout: 120)
        #expect(steps["form shown"] as? Bool == true)
        #expect(steps["wrong password message"] as? String == "incorrect password")
        #expect(steps["form still shown"] as? Bool == true)
        #expect(steps["title after"] as? String == ControlSocketExpectations.media[0].title)
        #expect(steps["queue after"] as? Int == ControlSocketExpectations.media.count)
        #expect(steps["time moves"] as? Bool == true)
        #expect((steps["console"] as? [Any])?.isEmpty == true, "console: \(String(describing: steps["console"]))")
        #expect(FileManager.default.fileExists(atPath: shot.path))
        print("web page screenshot: \(shot.path)")
    }
}

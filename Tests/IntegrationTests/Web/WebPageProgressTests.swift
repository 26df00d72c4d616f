import Foundation
import Location
import TestSupport
import Testing

/// The web page's podcast downloads and location track in a real browser: headless
/// chromium driven by selenium (`Scripts/web_page_progress.py`), started once, against a daemon
/// downloading from nginx at a limited rate and taking fixes from gpsd fed by gpsfake. The
/// screenshot is kept beside `WebPageTests`' in `.build/test-artifacts/`, its path printed.
@Suite(.serialized) struct WebPageProgressTests {
    @Test func aDownloadsBarAdvancesAndTheFixesAreDrawnAsATrack() throws {
        // About 10 s at 100 kB/s: long enough to watch the bar move.
        let source = try BackgroundTransferTests.episode(copies: 5)
        let (nginx, setup) = try BackgroundTransferTests.serving(source)
        defer { setup.remove() }
        let start = Coordinate(latitude: 48.85660000, longitude: 2.35220000)
        // A turn half way, so the track is not a straight line: 150 fixes, of which the page keeps 100.
        let north = GPSFake.drive(from: start, bearing: 0, speed: 10, seconds: 75, at: LocationDaemonTests.epoch)
        let east = GPSFake.drive(from: start.moved(by: 750, bearing: 0), bearing: 90, speed: 10, seconds: 75,
                                 at: LocationDaemonTests.epoch.addingTimeInterval(75))
        let drive = north + east
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.1)
        let daemon = try WebProgressEventsTests.downloadingDaemon(nginx, music: setup.music,
                                                                  extra: ["--location", "gpsd:127.0.0.1:\(gpsfake.port)"])
        defer { daemon.stop() }
        try FileManager.default.createDirectory(at: WebPageTests.artifacts, withIntermediateDirectories: true)
        let shot = WebPageTests.artifacts.appendingPathComponent("web-page-progress.png")
        try? FileManager.default.removeItem(at: shot)
        let lastTime = Location.utc(drive.last!.time)
        let steps = try daemon.run(shot.path, [lastTime], script: "web_page_progress.py", timeout: 150)
        _ = steps.ok("push")

        let widths = steps["download widths"] as? [Double] ?? []
        #expect(widths.count == 4 && zip(widths.dropFirst(), widths).allSatisfy { $0 > $1 }, "the bar advances: \(widths)")
        let text = steps["download text"] as? String ?? ""
        #expect(text.contains("Episode One") && text.contains("downloading") && text.contains("Loopback Radio"), "\(text)")
        #expect(steps["download section shown"] as? Bool == true)

        // As many points as the daemon keeps fixes (its last 100).
        let client = try daemon.control.client()
        defer { client.close() }
        let kept = try client.request("locations").filter { $0.hasPrefix("lat:") }.count
        #expect(kept == 100, """
            150 fixes: the daemon keeps 100 (\(kept)); its location log: \
            \(daemon.process.standardError.split(separator: "\n").filter { $0.contains("location") }.suffix(10)); \
            gpsfake's: \(gpsfake.standardError.suffix(1_500))
            """)
        #expect(steps["track points"] as? Int == kept)
        #expect(steps["track shown"] as? Bool == true)
        let size = steps["track size"] as? [Double] ?? []
        #expect(size.count == 2 && size[0] > 100 && size[1] > 50, "\(size)")
        let width = steps["page width"] as? [Int] ?? []
        #expect(width.count == 2 && width[0] <= width[1], "fits a phone's width: \(width)")
        #expect((steps["console"] as? [Any])?.isEmpty == true, "console: \(String(describing: steps["console"]))")
        #expect(FileManager.default.fileExists(atPath: shot.path))
        print("web page screenshot (downloads, track): \(shot.path)")
    }
}

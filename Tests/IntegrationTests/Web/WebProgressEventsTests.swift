import Foundation
import Location
import TestSupport
import Testing

/// The WebSocket's unasked events for downloads and location (docs/websocket.md),
/// against the daemon as a process with real servers: nginx serving a feed and its episode
/// slowly (`limit_rate`), so that the download's progress can be watched, and gpsd fed by
/// gpsfake for the fixes. The client is Python's `websockets` (`Scripts/ws_progress.py`).
@Suite(.serialized) struct WebProgressEventsTests {
    /// A daemon downloading `BackgroundTransferTests`' feed from `nginx` into a scratch music directory.
    /// A daemon subscribed to nginx's feed that fetches it only when pushed to (`--fetch-interval
    /// never`): the script connects first and then pushes (`ws_api.py`'s `fetch_now`), so that it
    /// sees the whole download however long its own start took.
    static func downloadingDaemon(_ nginx: NginxServer, music: URL, extra: [String] = []) throws -> WebDaemon {
        try WebDaemon(["--feed", nginx.url("feed.xml").absoluteString, "--fetch-interval", "never", "--no-auto-enqueue"] + extra,
                      media: ["--music-directory", music.path])
    }

    @Test func aDownloadsProgressIsPushedAFewTimesASecondUpToDone() throws {
        let source = try BackgroundTransferTests.episode(copies: 5)
        // About 5 s at 200 kB/s: some twenty samples of its progress.
        let (nginx, setup) = try BackgroundTransferTests.serving(source, locations: "location /media/ { limit_rate 200k; }")
        defer { setup.remove() }
        let daemon = try Self.downloadingDaemon(nginx, music: setup.music)
        defer { daemon.stop() }
        let steps = try daemon.run("downloads", script: "ws_progress.py", timeout: 120)
        _ = steps.ok("push")
        #expect(steps["ended"] as? Bool == true, "the download ended: \(daemon.process.standardError.suffix(2_000))")

        let events = (steps["events"] as? [[Any]] ?? []).compactMap { row -> (at: Double, data: [String: Any])? in
            guard row.count == 2, let at = row[0] as? Double, let data = row[1] as? [String: Any] else { return nil }
            return (at, data)
        }
        let downloads = events.filter { $0.data["event"] as? String == "download" }
        let last = try #require(downloads.last?.data, "no download event: \(events.map(\.data))")
        #expect(last["state"] as? String == "done", "\(last)")
        #expect(last["title"] as? String == "Episode One" && last["feed"] as? String == "Loopback Radio", "\(last)")
        #expect(last["path"] as? String == BackgroundTransferTests.destination)
        #expect(last["received"] as? Int == source.count && last["expected"] as? Int == source.count, "\(last)")
        let number = last["download"] as? Int
        #expect(downloads.allSatisfy { $0.data["download"] as? Int == number }, "one download, one number")

        // Its progress: bytes that only grow, of the whole file's size, seen part way many times.
        let progress = downloads.filter { $0.data["state"] as? String == "downloading" }
        let received = progress.compactMap { $0.data["received"] as? Int }
        #expect(zip(received.dropFirst(), received).allSatisfy { $0 >= $1 }, "received only grows: \(received)")
        let partWay = progress.filter { ($0.data["received"] as? Int ?? 0) > 0 && ($0.data["received"] as? Int ?? 0) < source.count }
        #expect(partWay.count >= 8, "about 5 s of downloading at 4 samples a second: \(received)")
        #expect(partWay.allSatisfy { $0.data["expected"] as? Int == source.count })
        // Rate-limited: samples a quarter of a second apart (as they arrive: the median gap,
        // and no more than five a second over the download).
        let gaps = zip(progress.dropFirst(), progress).map { $0.at - $1.at }
        if gaps.count >= 4, let first = progress.first, let end = progress.last {
            #expect(percentile(gaps, 50) >= 0.2, "median gap \(percentile(gaps, 50)) s")
            #expect(Double(progress.count - 1) / (end.at - first.at) <= 5, "\(progress.count) events in \(end.at - first.at) s")
        }
        // The counts: one running while it downloads, none once done.
        let counts = events.filter { $0.data["event"] as? String == "downloads" }.map(\.data)
        #expect(counts.contains { $0["active"] as? Int == 1 }, "\(counts)")
        #expect(counts.last?["active"] as? Int == 0 && counts.last?["queued"] as? Int == 0, "\(counts)")

        // A client connecting afterwards gets the list at once: the counts, and the download done.
        let onConnect = steps["on connect"] as? [[String: Any]] ?? []
        #expect(onConnect.first?["event"] as? String == "downloads", "\(onConnect)")
        #expect(onConnect.contains { $0["download"] as? Int == number && $0["state"] as? String == "done" }, "\(onConnect)")
    }

    @Test func fixesArePushedAndANewClientGetsTheLastHundredAtOnce() throws {
        let start = Coordinate(latitude: 48.85660000, longitude: 2.35220000)
        // 150 fixes northwards at 10 m/s, twenty a second; the region 1 km on is entered at 900 m.
        let drive = GPSFake.drive(from: start, bearing: 0, speed: 10, seconds: 150, at: LocationDaemonTests.epoch)
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stop = start.moved(by: 1_000, bearing: 0)
        let gpx = try LocationRegionTests.gpx([("Stop A", String(format: "%.8f", stop.latitude), String(format: "%.8f", stop.longitude),
                                                "<qp:radius>100</qp:radius>")], in: directory)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.05)
        let daemon = try WebDaemon(["--location", "gpsd:127.0.0.1:\(gpsfake.port)", "--regions", gpx.path])
        defer { daemon.stop() }
        let lastTime = Location.utc(drive.last!.time)
        let steps = try daemon.run("location", [lastTime, "Stop A"], script: "ws_progress.py", timeout: 90)

        let pushed = steps["pushed"] as? [[String: Any]] ?? []
        #expect(pushed.count >= 50, "\(pushed.count) fixes pushed")
        for fix in pushed {
            guard let time = fix["time"] as? String, let epoch = drive.first(where: { Location.utc($0.time) == time }) else {
                Issue.record("a fix at a time not in the drive: \(fix)")
                continue
            }
            func number(_ key: String) -> Double { (fix[key] as? NSNumber)?.doubleValue ?? .nan }
            // Six decimals of a degree are sent (0.1 m).
            #expect(abs(number("latitude") - epoch.coordinate.latitude) < 1e-6 && abs(number("longitude") - epoch.coordinate.longitude) < 1e-6,
                    "\(fix)")
            // gpsd may not know the first fix's error yet: unknown is `null`, never a made-up figure.
            #expect(fix["accuracy"] is NSNull || abs(number("accuracy") - epoch.expectedAccuracy) < 0.01, "\(fix)")
            #expect(abs(number("speed") - 10) < 0.01, "\(fix)")
        }
        #expect(pushed.filter { !($0["accuracy"] is NSNull) }.count >= pushed.count - 2, "the accuracy, once gpsd has it")
        let track = steps["track"] as? [[String: Any]] ?? []
        #expect(track.last?["time"] as? String == lastTime, "followed to the end")
        #expect(track.count == 100, "the drive has 150 fixes: the last 100 are kept (\(track.count))")
        // The second client's history is the first one's track: the same last 100 fixes.
        let history = steps["on connect"] as? [[String: Any]] ?? []
        #expect(history.count == 100)
        #expect(history.map { $0["time"] as? String } == track.map { $0["time"] as? String })
        let regions = steps["regions"] as? [[String: Any]] ?? []
        #expect(regions.first?["region"] as? String == "Stop A" && regions.first?["state"] as? String == "enter", "\(regions)")
    }
}

import Foundation
import Location
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Regions that play: a GPX file of waypoints, a drive through them replayed by
/// gpsfake, and the daemon announcing each region entered over the queue, which then resumes
/// where it was.
@Suite(.serialized) struct LocationRegionTests {
    static let start = Coordinate(latitude: 48.85660000, longitude: 2.35220000)
    static let epoch = Date(timeIntervalSince1970: 1_795_773_913)

    /// A GPX file with `waypoints` (name, coordinate, extension elements) in `directory`.
    static func gpx(_ waypoints: [(name: String, lat: String, lon: String, extensions: String)], in directory: URL) throws -> URL {
        let body = waypoints.map { waypoint in
            """
              <wpt lat="\(waypoint.lat)" lon="\(waypoint.lon)">
                <name>\(waypoint.name)</name>
                <extensions>\(waypoint.extensions)</extensions>
              </wpt>
            """
        }.joined(separator: "\n")
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tests" xmlns="http://www.topografix.com/GPX/1/1" xmlns:qp="urn:queueplayerd:regions:1">
            \(body)
            </gpx>
            """
        let file = directory.appendingPathComponent("tour.gpx")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func enteringARegionAnnouncesItAndTheQueueResumesWhereItWas() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let song = try TestMedia.makeTone(seconds: 60, in: directory, name: "song")
        let sounds = directory.appendingPathComponent("sounds")
        try FileManager.default.createDirectory(at: sounds, withIntermediateDirectories: true)
        _ = try TestMedia.makeTone(seconds: 1.5, frequency: 880, in: sounds, name: "chime")
        // Northwards at 10 m/s: the stop 150 m on is entered at 100 m (its 50 m radius), 10 s in.
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 10, seconds: 40, at: Self.epoch)
        let stop = Self.start.moved(by: 150, bearing: 0)
        let beyond = Self.start.moved(by: 300, bearing: 0)
        let gpx = try Self.gpx([
            ("Stop A", String(format: "%.8f", stop.latitude), String(format: "%.8f", stop.longitude),
             "<qp:radius>50</qp:radius><qp:audio>sounds/chime.mp3</qp:audio>"),
            ("Southbound only", String(format: "%.8f", beyond.latitude), String(format: "%.8f", beyond.longitude),
             "<qp:audio>sounds/chime.mp3</qp:audio><qp:course>160-200</qp:course>"),
            ("Off the map", "95", "2.35", "<qp:audio>sounds/chime.mp3</qp:audio>"),
            ("Silent", String(format: "%.8f", beyond.latitude), "2.36", "<qp:audio>sounds/missing.mp3</qp:audio>"),
        ], in: directory)
        // Five epochs a second: the 40 s drive in 8 s.
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.1)
        let daemon = try LifecycleDaemon(["--output", "null", "--no-state", "--location", "gpsd:127.0.0.1:\(gpsfake.port)",
                                          "--regions", gpx.path, song.path])
        // The idle client first: an idle event reaches the clients connected when it happens, and
        // the drive starts as soon as the daemon watches gpsd (Stop A is entered about 2 s on).
        let idle = try UnixSocketClient(path: daemon.socket)
        defer { idle.close() }
        _ = try idle.readLine(timeout: 5)
        try idle.send("idle region\n")
        let stderr = daemon.process.standardError
        #expect(stderr.contains(#"region "Off the map": bad coordinates (lat 95, lon 2.35); left out"#), "\(stderr)")
        #expect(stderr.contains(#"region "Silent": its audio "#) && stderr.contains("missing.mp3 is not there; left out"), "\(stderr)")
        let regions = try LocationDaemonTests.lines(daemon, "regions")
        #expect(regions.filter { $0.hasPrefix("region: ") } == ["region: Stop A", "region: Southbound only"], "\(regions)")
        #expect(regions.contains("radius: 50.00") && regions.contains("course: 160-200"))

        #expect(try idle.readReply(timeout: 30) == ["changed: region", "OK"])
        #expect(daemon.waitForStandardError(timeout: 20) { $0.contains("announcing Stop A: chime.mp3") })
        let log = daemon.process.standardError
        let resumeAt = try #require(log.firstMatch(of: #/announcing Stop A: chime\.mp3 \(the queue resumes at (\d+\.\d+) s\)/#).flatMap { Double($0.1) })
        #expect(try LocationDaemonTests.lines(daemon, "regions").contains("inside: 1"))
        #expect(daemon.process.waitForLine(timeout: 10) { $0 == "Now playing: chime.mp3" } != nil)
        let resumed = waitUntil(timeout: 10) {
            let texts = daemon.process.lines.map(\.text)
            guard let chime = texts.firstIndex(of: "Now playing: chime.mp3") else { return false }
            return texts[chime...].contains("Now playing: song.mp3")
        }
        #expect(resumed, "\(daemon.process.lines.map(\.text))")
        // The seek lands a moment after the song is current again (`elapsed` is 0 until then).
        let status = try daemon.waitForStatus(timeout: 5) { (Double($0["elapsed"] ?? "") ?? 0) > 0 }
        #expect(status["song"] == "0" && status["state"] == "play" && status["playlistlength"] == "1", "the queue itself unchanged: \(status)")
        let elapsed = try #require(Double(status["elapsed"] ?? ""))
        #expect(elapsed >= resumeAt && elapsed < resumeAt + 1, "resumed at \(resumeAt) s, \(elapsed) s now; \(daemon.process.standardError.suffix(2500))")
        #expect(daemon.waitForStandardError(timeout: 20) { $0.contains("left region Stop A") })
        #expect(!daemon.process.standardError.contains("entered region Southbound only"), "northbound: the southbound stop stays silent")
        #expect(try LocationDaemonTests.lines(daemon, "regions").filter { $0.hasPrefix("inside:") } == ["inside: 0", "inside: 0"])
        #expect(daemon.process.standardError.components(separatedBy: "announcing").count == 2, "one announcement")
        print("announcement: the song paused at \(resumeAt) s, `status` after the resume \(elapsed) s")
        let dropped = daemon.process.standardError.split(separator: "\n").filter { $0.contains("fix dropped") }
        #expect(dropped.isEmpty, "a clean drive has no fix to drop: \(dropped.prefix(3))")
        gpsfake.stop()
    }
}

extension LocationRegionTests {
    @Test func twoRegionsEnteredAtOncePlayNearestFirstThenTheQueue() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let song = try TestMedia.makeTone(seconds: 60, in: directory, name: "song")
        _ = try TestMedia.makeTone(seconds: 1, frequency: 660, in: directory, name: "near")
        _ = try TestMedia.makeTone(seconds: 1, frequency: 990, in: directory, name: "far")
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 10, seconds: 30, at: Self.epoch)
        // Both circles (400 m) take in the start: the first fix enters both at once, 201 m from Near's
        // centre and 209 m from Far's (listed first in the file).
        let near = Self.start.moved(by: 200, bearing: 0).moved(by: 20, bearing: 90)
        let far = Self.start.moved(by: 200, bearing: 0).moved(by: 60, bearing: 270)
        let gpx = try Self.gpx([
            ("Far", String(format: "%.8f", far.latitude), String(format: "%.8f", far.longitude), "<qp:radius>400</qp:radius><qp:audio>far.mp3</qp:audio>"),
            ("Near", String(format: "%.8f", near.latitude), String(format: "%.8f", near.longitude), "<qp:radius>400</qp:radius><qp:audio>near.mp3</qp:audio>"),
        ], in: directory)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.1)
        let daemon = try LifecycleDaemon(["--output", "null", "--no-state", "--location", "gpsd:127.0.0.1:\(gpsfake.port)",
                                          "--regions", gpx.path, song.path])
        let played = { daemon.process.lines.map(\.text).filter { $0.hasPrefix("Now playing: ") } }
        #expect(waitUntil(timeout: 30) { played().count >= 4 }, "\(played())")
        #expect(played() == ["Now playing: song.mp3", "Now playing: near.mp3", "Now playing: far.mp3", "Now playing: song.mp3"])
        let log = daemon.process.standardError
        #expect(log.components(separatedBy: "entered region Near")[0].contains("entered region Far") == false, "Near is entered first")
        let status = try daemon.waitForStatus(timeout: 5) { (Double($0["elapsed"] ?? "") ?? 0) > 0 && $0["song"] == "0" }
        #expect(status["playlistlength"] == "1")
        gpsfake.stop()
    }
}

/// Region monitoring needs no background mode and goes on while the daemon is suspended: an
/// event wakes it into the background, it handles it, and it is suspended again.
@Suite(.serialized) struct LocationSuspendedRegionTests {
    @Test func aRegionEnteredWhileSuspendedWakesTheDaemonForTheEvent() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two epochs a second, 10 m/s: the stop 300 m on is entered at 250 m, 12.5 s after the lead-in.
        let drive = GPSFake.drive(from: LocationRegionTests.start, bearing: 0, speed: 10, seconds: 45, at: LocationRegionTests.epoch)
        let stop = LocationRegionTests.start.moved(by: 300, bearing: 0)
        let gpx = try LocationRegionTests.gpx([("Stop B", String(format: "%.8f", stop.latitude), String(format: "%.8f", stop.longitude),
                                                "<qp:radius>50</qp:radius>")], in: directory)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.25)
        let daemon = try LifecycleDaemon(["--output", "null", "--no-state", "--background-time", "1", "--background-modes", "audio",
                                          "--location", "gpsd:127.0.0.1:\(gpsfake.port)", "--regions", gpx.path])
        daemon.process.send(SIGUSR1)
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("suspended: the audio device is closed") })
        #expect(!daemon.process.standardError.contains("entered region"), "suspended before the stop")
        #expect(daemon.waitForStandardError(timeout: 30) { $0.contains("location: entered region Stop B") })
        let log = daemon.process.standardError
        let woken = try #require(log.range(of: "woken from suspension"), "the event woke the daemon: \(log.suffix(1_500))")
        let entered = try #require(log.range(of: "location: entered region Stop B"))
        #expect(woken.lowerBound < entered.lowerBound)
        #expect(try daemon.waitForStatus(timeout: 15) { $0["appstate"] == "suspended" }["appstate"] == "suspended",
                "suspended again once the event is handled")
        gpsfake.stop()
    }
}

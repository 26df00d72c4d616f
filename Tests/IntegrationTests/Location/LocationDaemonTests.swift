import Foundation
import Location
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Location updates in the daemon, seen from outside: the daemon as a process with
/// `--location` on a real gpsd fed by gpsfake, its `Background location:` lines checked against
/// the drive, its commands on the control socket, its log, its saved fixes.
@Suite(.serialized) struct LocationDaemonTests {
    static let start = Coordinate(latitude: 37.33482105, longitude: -122.03350886)
    static let epoch = Date(timeIntervalSince1970: 1_795_773_913)

    /// The `Background location:` lines printed so far, parsed.
    struct Line {
        var latitude: Double, longitude: Double, accuracy: Double, speed: Double, course: Double
        var time: String
    }

    static func backgroundLines(_ daemon: LifecycleDaemon) -> [Line] {
        daemon.process.lines.compactMap { line in
            guard let match = line.text.wholeMatch(of: #/Background location: <([+-]\d+\.\d{8}),([+-]\d+\.\d{8})> \+/- (\d+\.\d{2})m \(speed (-?\d+\.\d{2}) mps / course (-?\d+\.\d{2})\) @ (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)/#) else { return nil }
            return Line(latitude: Double(match.1)!, longitude: Double(match.2)!, accuracy: Double(match.3)!, speed: Double(match.4)!,
                        course: Double(match.5)!, time: String(match.6))
        }
    }

    /// Sends `command` and returns the reply lines without the final OK (or the ACK line).
    static func lines(_ daemon: LifecycleDaemon, _ command: String) throws -> [String] {
        let client = try UnixSocketClient(path: daemon.socket)
        defer { client.close() }
        _ = try client.readLine(timeout: 5)
        let reply = try client.request(command)
        return reply.last == "OK" ? Array(reply.dropLast()) : reply
    }

    static func daemon(_ gpsfake: GPSFake?, port: Int? = nil, _ arguments: [String], stateHome: URL? = nil) throws -> LifecycleDaemon {
        let port = gpsfake?.port ?? port ?? 1
        return try LifecycleDaemon(["--output", "null", "--location", "gpsd:127.0.0.1:\(port)"] + arguments, stateHome: stateHome)
    }

    @Test func aDriveInTheBackgroundPrintsEachFixAsCoreLocationLogsIt() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 255.94, speed: 15.9, seconds: 60, at: Self.epoch, hdop: 5.0 / 19)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.03)
        let daemon = try Self.daemon(gpsfake, ["--no-state", "--background-modes", "audio,location"])
        daemon.process.send(SIGUSR1)
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("entered the background") })
        #expect(waitUntil(timeout: 30) { Self.backgroundLines(daemon).last?.time == Location.utc(drive.last!.time) },
                "stdout: \(daemon.process.lines.suffix(5).map(\.text)); stderr: \(daemon.process.standardError.suffix(2_000))")
        let lines = Self.backgroundLines(daemon)
        #expect(lines.count >= 20, "\(lines.count) lines")
        var previous: String?
        for line in lines {
            guard let epoch = drive.first(where: { Location.utc($0.time) == line.time }) else {
                Issue.record("a line at a time not in the drive: \(line)")
                continue
            }
            #expect(abs(line.latitude - epoch.coordinate.latitude) < 2e-8 && abs(line.longitude - epoch.coordinate.longitude) < 2e-8,
                    "\(line) against \(epoch.coordinate)")
            #expect(line.accuracy == 5.00 && line.speed == 15.90 && line.course == 255.94, "\(line)")
            if let previous { #expect(previous < line.time, "one line per fix, in order") }
            previous = line.time
        }
        // The last one in the foreground commands too.
        let location = try Self.lines(daemon, "location")
        #expect(location.contains("time: \(Location.utc(drive.last!.time))") && location.contains("mode: 3d") && location.contains("accuracy: 5.00"),
                "\(location)")
    }

    @Test func withoutTheLocationModeTheBackgroundTakesNoUpdatesAndTheForegroundResumesThem() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 10, seconds: 200, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.05)
        let daemon = try Self.daemon(gpsfake, ["--no-state", "--background-modes", "audio"])
        #expect(waitUntil(timeout: 20) { ((try? Self.lines(daemon, "locations")) ?? []).filter { $0.hasPrefix("lat:") }.count >= 3 })
        daemon.process.send(SIGUSR1)
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("location: no updates in the background without the location background mode") })
        let watcher = try GPSDWatcher(port: gpsfake.port)
        let kept = try Self.lines(daemon, "locations").filter { $0.hasPrefix("lat:") }.count
        // While gpsd reports 10 more fixes, none is taken.
        #expect(waitUntil(timeout: 20) { watcher.fixCount >= 10 })
        #expect(try Self.lines(daemon, "locations").filter { $0.hasPrefix("lat:") }.count == kept)
        #expect(Self.backgroundLines(daemon).isEmpty)
        #expect(daemon.process.standardError.components(separatedBy: "no updates in the background").count == 2, "said once")
        daemon.process.send(SIGUSR2)
        #expect(waitUntil(timeout: 20) { ((try? Self.lines(daemon, "locations")) ?? []).filter { $0.hasPrefix("lat:") }.count > kept + 2 },
                "updates resume in the foreground")
    }

    @Test func noGpsdIsAWarningAndPlaybackGoesOn() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 30, in: directory, name: "tone")
        let port = try SnapcastPair.freePort()
        let daemon = try Self.daemon(nil, port: port, ["--no-state", tone.path])
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("location: cannot connect to 127.0.0.1:\(port)") && $0.contains("playback is unaffected") },
                "\(daemon.process.standardError)")
        #expect(try daemon.waitForStatus(timeout: 10) { $0["state"] == "play" && (Double($0["elapsed"] ?? "") ?? 0) > 1 }["state"] == "play")
        #expect(daemon.process.standardError.components(separatedBy: "playback is unaffected").count == 2, "warned once per outage")
        // gpsd comes: the daemon finds it (back-off at most 30 s; here the first attempts are a second or two apart).
        let gpsfake = try GPSFake(epochs: GPSFake.drive(from: Self.start, bearing: 0, speed: 10, seconds: 100, at: Self.epoch), port: port)
        #expect(waitUntil(timeout: 40) { ((try? Self.lines(daemon, "location")) ?? []).contains { $0.hasPrefix("lat:") } })
        #expect(daemon.process.standardError.contains("answers again"))
        gpsfake.stop()
    }

    @Test func theCommands() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 20, seconds: 300, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.02)
        let daemon = try Self.daemon(gpsfake, ["--no-state"])
        let idle = try UnixSocketClient(path: daemon.socket)
        defer { idle.close() }
        _ = try idle.readLine(timeout: 5)
        #expect(try idle.request("idle location", timeout: 30) == ["changed: location", "OK"])
        #expect(waitUntil(timeout: 20) { ((try? Self.lines(daemon, "locations")) ?? []).filter { $0.hasPrefix("lat:") }.count >= 5 })
        let location = try Self.lines(daemon, "location")
        #expect(location.map { String($0.prefix { $0 != ":" }) } == ["lat", "lon", "accuracy", "altitude", "speed", "course", "time", "mode"], "\(location)")

        // The distance filter: fixes kept 100 m apart at least (20 m/s: every fifth).
        #expect(try Self.lines(daemon, "locationdistance 100").isEmpty)
        let count = try Self.lines(daemon, "locations").filter { $0.hasPrefix("time:") }.count
        #expect(waitUntil(timeout: 30) { ((try? Self.lines(daemon, "locations")) ?? []).filter { $0.hasPrefix("time:") }.count >= count + 4 })
        let fixes = try Self.fixes(Self.lines(daemon, "locations")).dropFirst(count)
        for (a, b) in zip(fixes, fixes.dropFirst()) {
            #expect(a.distance(to: b) >= 99.9, "\(a.distance(to: b)) m apart")
        }
        #expect(try Self.lines(daemon, "locationdistance none").isEmpty)
        #expect(try Self.lines(daemon, "locationaccuracy threeKilometers").isEmpty)
        #expect(try Self.lines(daemon, "locationaccuracy best").isEmpty)
        #expect(try Self.lines(daemon, "locationaccuracy furlong") == [#"ACK [2@0] {locationaccuracy} Unrecognized accuracy "furlong", expected one of bestForNavigation, best, nearestTenMeters, hundredMeters, kilometer, threeKilometers"#])
        #expect(try Self.lines(daemon, "locationdistance -3") == ["ACK [2@0] {locationdistance} Expected metres (0 or more) or none: -3"])
        #expect(try Self.lines(daemon, "locationupdates 2") == ["ACK [2@0] {locationupdates} Unrecognized location updates mode, expected 0, 1, or significant"])
        #expect(try Self.lines(daemon, "regions").isEmpty)

        // Off: nothing more is kept.
        #expect(try Self.lines(daemon, "locationupdates 0").isEmpty)
        let watcher = try GPSDWatcher(port: gpsfake.port)
        let kept = try Self.lines(daemon, "locations").count
        #expect(waitUntil(timeout: 20) { watcher.fixCount >= 10 })
        #expect(try Self.lines(daemon, "locations").count == kept)
        #expect(try Self.lines(daemon, "locationupdates 1").isEmpty)
        #expect(waitUntil(timeout: 20) { ((try? Self.lines(daemon, "locations")) ?? []).count > kept })
    }

    @Test func significantChangesGoOnInTheBackgroundWithoutTheLocationMode() throws {
        // 20 m/s replayed at 25 epochs a second: 500 m of road every second, for a minute; the
        // significant-change service takes a fix every 10 s.
        let drive = GPSFake.drive(from: Self.start, bearing: 90, speed: 20, seconds: 1_500, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.02)
        let daemon = try Self.daemon(gpsfake, ["--no-state", "--background-modes", "audio"])
        #expect(try Self.lines(daemon, "locationupdates significant").isEmpty)
        daemon.process.send(SIGUSR1)
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("entered the background") })
        #expect(waitUntil(timeout: 40) { Self.backgroundLines(daemon).count >= 3 }, "\(daemon.process.lines.map(\.text))")
        #expect(!daemon.process.standardError.contains("no updates in the background"), "standard updates are off: nothing refused")
        let points = Self.backgroundLines(daemon).map { Coordinate(latitude: $0.latitude, longitude: $0.longitude) }
        for (a, b) in zip(points, points.dropFirst()) {
            #expect(a.distance(to: b) >= 500, "a significant change is 500 m at least: \(a.distance(to: b)) m")
        }
        gpsfake.stop()
    }

    /// The power knob seen from outside: the daemon's context switches a second (every thread of
    /// it) while gpsd reports 10 epochs a second and nothing plays, at `best` and at `threeKilometers`.
    @Test func theDaemonWakesAFractionAsOftenAtThreeKilometers() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 15, seconds: 600, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.05)
        let daemon = try Self.daemon(gpsfake, ["--no-state"])
        #expect(waitUntil(timeout: 20) { ((try? Self.lines(daemon, "location")) ?? []).contains { $0.hasPrefix("lat:") } })
        let watcher = try GPSDWatcher(port: gpsfake.port)
        /// Context switches a second over the next `fixes` epochs gpsd reports: per thread, so a
        /// worker thread that ends meanwhile does not take its count away (its last switches are missed).
        func rate(over fixes: Int) -> Double {
            let (switches, time, seen) = (Self.switchesByThread(daemon), ChildProcess.now(), watcher.fixCount)
            #expect(waitUntil(timeout: 30) { watcher.fixCount >= seen + fixes })
            let after = Self.switchesByThread(daemon)
            let total = after.reduce(0) { $0 + max(0, $1.value - (switches[$1.key] ?? 0)) }
            return Double(total) / (ChildProcess.now() - time)
        }
        let best = rate(over: 100)
        #expect(try Self.lines(daemon, "locationaccuracy threeKilometers").isEmpty)
        _ = rate(over: 10)  // the fix taken at once, then silence
        let coarse = rate(over: 100)
        print(String(format: "daemon context switches per second, nothing playing, gpsd at 10 epochs/s: best %.1f, threeKilometers %.1f", best, coarse))
        #expect(coarse < best / 3, "threeKilometers \(coarse) a second against best's \(best)")
        gpsfake.stop()
    }

    @Test func withoutLocationTheCommandsSaySo() throws {
        let daemon = try LifecycleDaemon(["--output", "null", "--no-state"])
        #expect(try Self.lines(daemon, "location") == ["ACK [50@0] {location} location updates are off (start with --location)"])
    }

    @Test func theLast100FixesSurviveARestart() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let drive = GPSFake.drive(from: Self.start, bearing: 45, speed: 10, seconds: 150, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive, cycle: 0.01)
        let first = try Self.daemon(gpsfake, [], stateHome: stateHome)
        #expect(waitUntil(timeout: 30) { ((try? Self.lines(first, "location")) ?? []).contains("time: \(Location.utc(drive.last!.time))") })
        let before = try Self.lines(first, "locations")
        #expect(before.filter { $0.hasPrefix("time:") }.count == 100)
        first.process.send(SIGTERM)
        #expect(first.process.wait(timeout: 15) == 0)
        let file = stateHome.appendingPathComponent("queueplayerd/locations.json")
        #expect(FileManager.default.fileExists(atPath: file.path))
        gpsfake.stop()
        let second = try Self.daemon(nil, port: gpsfake.port, [], stateHome: stateHome)
        #expect(try Self.lines(second, "locations") == before)
    }

    /// Each thread's voluntary and involuntary context switches so far, by thread id.
    static func switchesByThread(_ daemon: LifecycleDaemon) -> [String: Int] {
        let pid = daemon.process.processIdentifier
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var result: [String: Int] = [:]
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            result[task] = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
        }
        return result
    }

    /// The coordinates of a `locations` reply.
    static func fixes(_ lines: [String]) -> [Coordinate] {
        var result: [Coordinate] = []
        var latitude: Double?
        for line in lines {
            if line.hasPrefix("lat: ") { latitude = Double(line.dropFirst(5)) }
            if line.hasPrefix("lon: "), let lat = latitude, let lon = Double(line.dropFirst(5)) {
                result.append(Coordinate(latitude: lat, longitude: lon))
            }
        }
        return result
    }
}

@testable import DaemonCore
import Foundation
import Location
import Testing
import TestSupport

/// `--location`'s value and `--regions`' GPX file, as the daemon reads them.
struct LocationOptionsTests {
    @Test func locationChoices() {
        #expect(LocationChoice(argument: "") == LocationChoice(host: "localhost", port: 2947))
        #expect(LocationChoice(argument: "gpsd") == LocationChoice(host: "localhost", port: 2947))
        #expect(LocationChoice(argument: "gpsd:pi.local") == LocationChoice(host: "pi.local", port: 2947))
        #expect(LocationChoice(argument: "gpsd:10.0.0.2:3000") == LocationChoice(host: "10.0.0.2", port: 3000))
        #expect(LocationChoice(argument: "gpsd:[::1]:3000") == LocationChoice(host: "::1", port: 3000))
        #expect(LocationChoice(argument: "gpsd:[::1]")?.description == "gpsd:[::1]:2947")
        for bad in ["gps", "gpsd:host:", "gpsd:host:0", "gpsd:host:70000", "gpsd:host:port", "gpsd:[::1", "gpsd:a b", "nmea:/dev/ttyUSB0"] {
            #expect(LocationChoice(argument: bad) == nil, "\(bad)")
        }
    }

    static func gpx(_ body: String) -> Data {
        Data("""
            <?xml version="1.0"?>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1" xmlns:r="urn:queueplayerd:regions:1">
            \(body)
            """.utf8)
    }

    @Test func waypointsWithTheirExtensionsAndTheirProblems() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("regions-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data().write(to: directory.appendingPathComponent("bell.mp3"))
        let read = try RegionFile.parse(Self.gpx("""
            <wpt lat="48.8566" lon="2.3522"><name>Centre</name>
              <extensions><r:radius>120</r:radius><r:audio>bell.mp3</r:audio><r:course>350-20</r:course></extensions></wpt>
            <wpt lat="48.86" lon="2.35"><name>Default radius</name></wpt>
            <wpt lat="91" lon="2.35"><name>North of the pole</name></wpt>
            <wpt lat="48.86" lon="2.35"><name>Bad radius</name><extensions><r:radius>-5</r:radius></extensions></wpt>
            <wpt lat="48.86" lon="2.35"><name>Bad course</name><extensions><r:course>east</r:course></extensions></wpt>
            <wpt lat="48.86" lon="2.35"><name>Centre</name></wpt>
            <wpt lat="48.86" lon="2.35"><name>Other namespace</name><extensions><radius>5</radius></extensions></wpt>
            <wpt lat="48.87" lon="2.35"><name>Cut short</name><extensions><r:radius>
            """), relativeTo: directory)
        #expect(read.waypoints.map(\.name) == ["Centre", "Default radius", "Other namespace"])
        let centre = try #require(read.waypoints.first)
        #expect(centre.region.radius == 120 && centre.region.course == CourseRange("350-20"))
        #expect(centre.audio == directory.appendingPathComponent("bell.mp3").standardizedFileURL)
        #expect(read.waypoints[1].region.radius == 50 && read.waypoints[1].audio == nil)
        #expect(read.waypoints[2].region.radius == 50, "a radius outside the namespace is not ours")
        #expect(read.problems.count == 5, "\(read.problems)")
        #expect(read.problems[0].hasPrefix(#"region "North of the pole": bad coordinates"#))
        #expect(read.problems[1].hasPrefix(#"region "Bad radius": bad radius "-5""#))
        #expect(read.problems[2].hasPrefix(#"region "Bad course": bad course "east""#))
        #expect(read.problems[3] == #"region "Centre": the name is used twice; left out"#)
        #expect(read.problems[4].hasPrefix("the GPX file is malformed at line") && read.problems[4].contains(#"in waypoint "Cut short""#),
                "\(read.problems[4])")
    }

    /// A GPX document of `count` valid waypoints, each named apart.
    static func waypoints(_ count: Int) -> Data {
        var body = ""
        body.reserveCapacity(count * 80)
        for index in 0..<count {
            body += "<wpt lat=\"48.\(index)\" lon=\"2.35\"><name>Stop \(index)</name></wpt>\n"
        }
        return gpx(body + "</gpx>\n")
    }


    /// The read grows with the file, not its square: 40,000 waypoints against 10,000 take about 4
    /// times the thread's CPU time when linear (8 allowed for cache effects), 16 when quadratic,
    /// and a few seconds at most. CPU time, not wall time: another process on the core does not
    /// stretch it. The directory of an audio path is never looked at for waypoints without one.
    @Test func aLargeFileIsReadInLinearTime() throws {
        let directory = URL(fileURLWithPath: "/nonexistent")
        let (small, large) = (Self.waypoints(10_000), Self.waypoints(40_000))
        var read: (waypoints: [RegionWaypoint], problems: [String]) = ([], [])
        _ = try RegionFile.parse(Self.waypoints(1_000), relativeTo: directory)
        // The best of three reads of each.
        let short = try (0..<3).map { _ in try ThreadCPUTime.of { read = try RegionFile.parse(small, relativeTo: directory) } }.min()!
        #expect(read.waypoints.count == 10_000 && read.problems.isEmpty)
        let long = try (0..<3).map { _ in try ThreadCPUTime.of { read = try RegionFile.parse(large, relativeTo: directory) } }.min()!
        #expect(read.waypoints.count == 40_000 && read.problems.isEmpty, "\(read.problems.prefix(3))")
        #expect(long < 5, "40,000 waypoints read in \(long) s")
        #expect(long / max(short, 0.01) < 8, "10,000 waypoints in \(short) s, 40,000 in \(long) s")
    }

    @Test func moreWaypointsThanTheCapAreRefused() throws {
        #expect(throws: RegionFile.Refusal(description: "more than 100000 waypoints (100001 read before stopping)")) {
            try RegionFile.parse(Self.waypoints(RegionFile.maximumWaypoints + 1), relativeTo: URL(fileURLWithPath: "/"))
        }
        #expect(try RegionFile.parse(Self.waypoints(3), relativeTo: URL(fileURLWithPath: "/")).waypoints.count == 3)
    }

    /// A read whose task is cancelled stops as it goes (a stop during the read ends it) instead
    /// of reading the whole file.
    @Test func aCancelledReadStops() async throws {
        let data = Self.waypoints(RegionFile.maximumWaypoints)
        let started = ChildProcess.now()
        let task = Task { try RegionFile.parse(data, relativeTo: URL(fileURLWithPath: "/")) }
        task.cancel()
        let result = await task.result
        let elapsed = ChildProcess.now() - started
        #expect(throws: CancellationError.self) { try result.get() }
        // The whole file reads in about a second here; stopped, it reads at most 1,024 elements.
        let wholeStart = ChildProcess.now()
        _ = try RegionFile.parse(data, relativeTo: URL(fileURLWithPath: "/"))
        let whole = ChildProcess.now() - wholeStart
        #expect(elapsed < whole / 2, "cancelled after \(elapsed) s; the whole read takes \(whole) s")
    }

    /// An external entity is never read (the parser never resolves one), and costs the waypoint
    /// that refers to it nothing but the entity's text: the next waypoint, whose name came right
    /// after the reference, was lost with it (corelibs' parser dropped that text).
    @Test(arguments: ["system", "missing", "public", "parameter"])
    func anExternalEntityCostsNoOtherWaypoint(declaring kind: String) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret.txt")
        let marker = "SECRET-MARKER-\(UUID().uuidString)"
        try marker.write(to: secret, atomically: false, encoding: .utf8)
        let declaration = switch kind {
        case "system": "<!ENTITY ext SYSTEM \"file://\(secret.path)\">"
        case "missing": "<!ENTITY ext SYSTEM 'file:///nonexistent/regions.txt'>"
        case "public": "<!ENTITY ext PUBLIC \"-//queueplayerd//tests//EN\"\n  \"file://\(secret.path)\">"
        default: "<!ENTITY % p SYSTEM \"file://\(secret.path)\"> %p; <!ENTITY ext SYSTEM \"file://\(secret.path)\">"
        }
        let document = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [\(declaration)]>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
            <wpt lat="48.1" lon="2.35"><name>Before</name></wpt>
            <wpt lat="48.2" lon="2.35"><name>With &ext;</name></wpt><wpt lat="48.3" lon="2.35"><name>After</name></wpt>
            <wpt lat="48.4" lon="2.35"><name>Last
            """
        let read = try RegionFile.parse(Data(document.utf8), relativeTo: directory)
        #expect(read.waypoints.map(\.name) == ["Before", "With", "After"], "\(read.problems)")
        #expect(!read.waypoints.contains { $0.name.contains(marker) } && !read.problems.contains { $0.contains(marker) })
        // Lines are where they were: the error of the cut-short end names the last line.
        #expect(read.problems.count == 1 && read.problems[0].hasPrefix("the GPX file is malformed at line \(kind == "public" ? 7 : 6)"),
                "\(read.problems)")
    }
}

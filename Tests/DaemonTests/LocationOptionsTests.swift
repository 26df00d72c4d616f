@testable import DaemonCore
import Foundation
import Location
import Testing

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
        let read = RegionFile.parse(Self.gpx("""
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
}

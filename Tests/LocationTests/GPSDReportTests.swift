import Foundation
@testable import Location
import Testing

/// gpsd's JSON lines as the source reads them: real TPVs from gpsd 3.22 fed by gpsfake, and
/// everything a broken or hostile server might send instead.
struct GPSDReportTests {
    static func parse(_ line: String) -> GPSDReport { GPSDReport.parse(Array(line.utf8)) }

    @Test func a3DFixFromGpsd() throws {
        let report = Self.parse(#"{"class":"TPV","device":"/dev/pts/3","mode":3,"time":"2026-11-27T10:05:05.000Z","ept":0.005,"lat":37.335321667,"lon":-122.033508333,"altHAE":12.5000,"altMSL":12.5000,"alt":12.5000,"track":255.9400,"magtrack":269.0516,"magvar":13.1,"speed":15.896,"geoidSep":0.000,"eph":17.100,"epv":23.5}"#)
        guard case .location(let location) = report else { Issue.record("\(report)"); return }
        #expect(location.fix == .threeDimensional)
        #expect(location.coordinate == Coordinate(latitude: 37.335321667, longitude: -122.033508333))
        #expect(location.altitude == 12.5 && location.verticalAccuracy == 23.5)
        #expect(location.horizontalAccuracy == 17.1 && location.speed == 15.896 && location.course == 255.94)
        #expect(location.timestamp == Date(timeIntervalSince1970: 1_795_773_905))
    }

    @Test func a2DFixHasNoAltitudeAndTakesTheLargerOfEpxAndEpy() throws {
        let report = Self.parse(#"{"class":"TPV","mode":2,"time":"2026-11-27T10:05:05.25Z","lat":1.5,"lon":2.5,"epx":3.0,"epy":4.5}"#)
        guard case .location(let location) = report else { Issue.record("\(report)"); return }
        #expect(location.fix == .twoDimensional && location.verticalAccuracy == -1)
        #expect(location.horizontalAccuracy == 4.5 && location.speed == -1 && location.course == -1)
        #expect(location.timestamp == Date(timeIntervalSince1970: 1_795_773_905.25))
    }

    @Test func modesZeroAndOneAreNoFix() {
        #expect(Self.parse(#"{"class":"TPV","mode":1,"time":"2026-11-27T10:05:05.000Z"}"#) == .noFix)
        #expect(Self.parse(#"{"class":"TPV","mode":0}"#) == .noFix)
        #expect(Self.parse(#"{"class":"TPV","mode":3}"#) == .noFix, "no coordinates")
    }

    @Test func otherClassesAndTheBanner() {
        #expect(Self.parse(#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#) == .version("3.22"))
        #expect(Self.parse(#"{"class":"SKY","satellites":[]}"#) == .other("SKY"))
    }

    @Test func garbageIsMalformed() {
        for line in ["", "hello", "{", #"{"class":"TPV","mode":3,"lat":"north"}"#, #"{"mode":3}"#, "[1,2]",
                     #"{"class":"TPV","mode":3,"lat":1,"lon":2,"time":"yesterday"}"#,
                     #"{"class":"TPV","mode":3,"lat":1,"lon":2}"#, String(repeating: "\u{0}", count: 10)] {
            if case .malformed = Self.parse(line) { continue }
            Issue.record("not malformed: \(line.debugDescription) -> \(Self.parse(line))")
        }
    }

    @Test func numbersOutOfRangeParseAndAreLeftToTheSanityCheck() {
        // JSON has no NaN; a number too large for a Double is refused by the decoder or becomes infinite.
        let huge = Self.parse(#"{"class":"TPV","mode":3,"time":"2026-11-27T10:05:05Z","lat":1e999,"lon":2}"#)
        if case .location(let location) = huge { #expect(!location.coordinate.isValid) }
        let outside = Self.parse(#"{"class":"TPV","mode":2,"time":"2026-11-27T10:05:05Z","lat":91,"lon":2}"#)
        guard case .location(let location) = outside else { Issue.record("\(outside)"); return }
        var sanity = FixSanity()
        #expect(sanity.check(location) != nil)
    }

    @Test func timesAreReadWithoutACalendar() {
        #expect(GPSDReport.timestamp("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(GPSDReport.timestamp("2000-02-29T23:59:59.5Z") == Date(timeIntervalSince1970: 951_868_799.5))
        #expect(GPSDReport.timestamp("2026-11-27T10:05:13.000Z") == Date(timeIntervalSince1970: 1_795_773_913))
        for bad in ["2026-13-27T10:05:13Z", "2026-11-27 10:05:13Z", "2026-11-27T10:05:13", "2026-11-27T10:05:13.Z", "x"] {
            #expect(GPSDReport.timestamp(bad) == nil, "\(bad)")
        }
    }

    @Test func linesAreSplitAndOverlongOnesDroppedWhileTheyStream() {
        var buffer = GPSDLineBuffer(maximumLength: 10)
        var pieces: [String] = []
        func feed(_ text: String) {
            Array(text.utf8).withUnsafeBytes { bytes in
                buffer.append(bytes) { piece in
                    switch piece {
                    case .line(let line): pieces.append(String(decoding: line, as: UTF8.self))
                    case .overlong(let length): pieces.append("overlong \(length)")
                    }
                }
            }
        }
        feed("one\r\ntw")
        feed("o\n0123456789\n01234")
        feed("567890123")
        feed(String(repeating: "x", count: 100))
        feed("\nlast\n")
        #expect(pieces == ["one", "two", "0123456789", "overlong 114", "last"])
    }

    /// Random bytes and mutated gpsd lines never crash the parser (the fuzz target's property,
    /// run here from a fixed seed).
    @Test func randomInputNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        let seed = Array(#"{"class":"TPV","mode":3,"time":"2026-11-27T10:05:05.000Z","lat":37.3,"lon":-122.0,"eph":5}"#.utf8)
        for _ in 0..<2_000 {
            var line = seed
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                line[Int.random(in: 0..<line.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = GPSDReport.parse(line)
        }
    }
}

import Foundation
import Location

/// What gpsd (or whatever answers on its port) sends: the bytes cut into lines, each line
/// through `GPSDReport.parse`, each fix through `FixSanity` and the region monitor, as the
/// location source and manager take them.
///
/// Nothing may trap, and a fix that passes the sanity check must be one the daemon can use:
/// valid coordinates, finite numbers, a time no earlier than the last one passed.
enum GPSDReportFuzzTarget {
    static func run(_ input: UnsafeRawBufferPointer) throws(FuzzFinding) {
        var sanity = FixSanity()
        var monitor = RegionMonitor()
        monitor.add(CircularRegion(center: Coordinate(latitude: 37.3348, longitude: -122.0335), radius: 50, identifier: "r",
                                   course: CourseRange("350-20")))
        var last: Date?
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard case .location(let location) = GPSDReport.parse(line) else { continue }
            guard sanity.check(location) == nil else { continue }
            try FuzzFinding.require(location.coordinate.isValid, "accepted coordinates \(location.coordinate)")
            try FuzzFinding.require([location.horizontalAccuracy, location.speed, location.course, location.altitude].allSatisfy(\.isFinite),
                                    "accepted a number that is not finite: \(location)")
            if let last {
                try FuzzFinding.require(location.timestamp >= last, "accepted a time going backwards: \(location.timestamp) after \(last)")
            }
            last = location.timestamp
            _ = monitor.update(with: location)
            _ = location.formatted
        }
    }
}

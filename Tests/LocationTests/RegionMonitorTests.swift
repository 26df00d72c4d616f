import Foundation
import Location
import Testing
import TestSupport

/// Entering and leaving circles without chatter: hysteresis, accuracy, the minute between
/// entries, direction of travel, and the order of two regions entered at once.
struct RegionMonitorTests {
    static let stop = CircularRegion(center: Track.start.moved(by: 205, bearing: 0), radius: 50, identifier: "stop")

    /// Monitoring a file of waypoints, one by one, costs what the waypoints do, not their square:
    /// 40,000 against 10,000 take about 4 times the thread's CPU time when linear (8 allowed for
    /// cache effects), 16 when quadratic; and the smallest radius (the sampling interval) follows
    /// regions added, replaced and removed.
    @Test func startingToMonitorManyRegionsIsLinear() {
        func seconds(_ count: Int) -> Double {
            let manager = LocationManager(source: ScriptedLocationSource())
            let start = ThreadCPUTime.now()
            for index in 0..<count {
                manager.startMonitoring(for: CircularRegion(center: Track.start, radius: 50, identifier: "stop \(index)"))
            }
            let elapsed = ThreadCPUTime.now() - start
            #expect(manager.monitoredRegions.count == count)
            manager.stopMonitoringAllRegions()
            #expect(manager.monitoredRegions.isEmpty)
            return elapsed
        }
        _ = seconds(1_000)
        // The best of three of each.
        let short = (0..<3).map { _ in seconds(10_000) }.min()!
        let long = (0..<3).map { _ in seconds(40_000) }.min()!
        #expect(long < 3, "40,000 regions monitored in \(long) s of CPU")
        #expect(long / max(short, 0.01) < 8, "10,000 regions in \(short) s, 40,000 in \(long) s")

        var monitor = RegionMonitor()
        #expect(monitor.smallestRadius == nil)
        for (radius, name) in [(80.0, "a"), (30, "b"), (60, "c")] {
            monitor.add(CircularRegion(center: Track.start, radius: radius, identifier: name))
        }
        #expect(monitor.smallestRadius == 30)
        monitor.add(CircularRegion(center: Track.start, radius: 90, identifier: "b"))
        #expect(monitor.smallestRadius == 60 && monitor.regions.map(\.identifier) == ["a", "c", "b"])
        monitor.remove(identifier: "c")
        monitor.remove(identifier: "missing")
        #expect(monitor.smallestRadius == 80 && monitor.regions.map(\.identifier) == ["a", "b"])
        monitor.remove(identifier: "a")
        monitor.add(CircularRegion(center: Track.start, radius: 10, identifier: "d"))
        #expect(monitor.smallestRadius == 10 && monitor.regions.map(\.identifier) == ["b", "d"])
    }

    @Test func aDriveThroughEntersAndExits() {
        var monitor = RegionMonitor()
        monitor.add(Self.stop)
        var events: [(Double, RegionMonitor.Event)] = []
        for metres in stride(from: 0.0, through: 400, by: 10) {
            for event in monitor.update(with: Track.fix(metres, second: metres / 10)) { events.append((metres, event)) }
        }
        #expect(events.map(\.1) == [.enter(Self.stop), .exit(Self.stop)])
        #expect(events.first?.0 == 160, "entered at the first fix within 50 m")
        #expect(events.last?.0 == 270, "left past radius + accuracy (55 m)")
    }

    @Test func aFixWanderingAcrossTheEdgeDoesNotExitWithinTheHysteresis() {
        var monitor = RegionMonitor()
        monitor.add(Self.stop)
        #expect(monitor.update(with: Track.fix(205, second: 0)) == [.enter(Self.stop)])
        // 52 m from the centre with ±5 m: outside the radius, inside radius + accuracy.
        #expect(monitor.update(with: Track.fix(257, second: 1)).isEmpty)
        #expect(monitor.update(with: Track.fix(205, second: 2)).isEmpty)
        #expect(monitor.states.first?.inside == true)
        // ±20 m: 60 m is not yet out (50 + 20).
        #expect(monitor.update(with: Track.fix(265, second: 3, accuracy: 20)).isEmpty)
        #expect(monitor.update(with: Track.fix(280, second: 4, accuracy: 20)) == [.exit(Self.stop)])
    }

    @Test func aFixWorseThanTheRadiusChangesNothing() {
        var monitor = RegionMonitor()
        monitor.add(Self.stop)
        #expect(monitor.update(with: Track.fix(205, second: 0, accuracy: 80)).isEmpty)
        #expect(monitor.states.first?.inside == nil)
        #expect(monitor.update(with: Track.fix(205, second: 1, accuracy: 50)) == [.enter(Self.stop)], "as good as the radius: enough")
        #expect(monitor.update(with: Track.fix(0, second: 2, accuracy: 300)).isEmpty, "a bad fix far away does not exit")
    }

    @Test func noSecondEntryWithinAMinute() {
        var monitor = RegionMonitor()
        monitor.add(Self.stop)
        #expect(monitor.update(with: Track.fix(205, second: 0)) == [.enter(Self.stop)])
        #expect(monitor.update(with: Track.fix(400, second: 20)) == [.exit(Self.stop)])
        #expect(monitor.update(with: Track.fix(205, second: 40)).isEmpty, "40 s after the last entry")
        #expect(monitor.update(with: Track.fix(400, second: 50)).isEmpty, "its entry was not announced: nor is its exit")
        #expect(monitor.update(with: Track.fix(205, second: 61)) == [.enter(Self.stop)])
    }

    @Test func aCourseRangeTriggersOnlyTravellingWithinIt() throws {
        let northbound = CircularRegion(center: Self.stop.center, radius: 50, identifier: "north", course: try #require(CourseRange("350-20")))
        var monitor = RegionMonitor()
        monitor.add(northbound)
        // Southbound through it: nothing.
        var events: [RegionMonitor.Event] = []
        for metres in stride(from: 400.0, through: 0, by: -10) {
            events += monitor.update(with: Track.fix(metres, second: (400 - metres) / 10, course: 180))
        }
        #expect(events.isEmpty)
        // Northbound: entered, and left.
        for metres in stride(from: 0.0, through: 400, by: 10) {
            events += monitor.update(with: Track.fix(metres, second: 100 + metres / 10, course: 5))
        }
        #expect(events == [.enter(northbound), .exit(northbound)])
        // Standing inside with no course known: no entry.
        var standing = RegionMonitor()
        standing.add(northbound)
        #expect(standing.update(with: Track.fix(205, second: 0, course: -1)).isEmpty)
        #expect(standing.update(with: Track.fix(206, second: 1, course: 10)) == [.enter(northbound)], "then it drives off northwards")
    }

    @Test func twoRegionsEnteredAtOncePlayNearestFirst() {
        let near = CircularRegion(center: Track.start.moved(by: 10, bearing: 90), radius: 100, identifier: "near")
        let far = CircularRegion(center: Track.start.moved(by: 60, bearing: 270), radius: 100, identifier: "far")
        var monitor = RegionMonitor()
        monitor.add(far)
        monitor.add(near)
        #expect(monitor.update(with: Track.fix(0, second: 0)) == [.enter(near), .enter(far)])
    }
}

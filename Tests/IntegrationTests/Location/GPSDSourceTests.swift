import Foundation
import Location
import Synchronization
import TestSupport
import Testing

/// ``GPSDLocationSource`` and ``LocationManager`` against a real gpsd fed by gpsfake: the
/// fixes as gpsd reports them, the power knob measured (wake-ups a second at each accuracy),
/// and a gpsd that goes away and comes back.
@Suite(.serialized) struct GPSDSourceTests {
    static let start = Coordinate(latitude: 37.33482105, longitude: -122.03350886)
    static let epoch = Date(timeIntervalSince1970: 1_795_773_913)

    /// Collects what the manager delivers.
    final class Collector: LocationManagerDelegate {
        let locations = Mutex<[Location]>([])
        let errors = Mutex<[LocationError]>([])
        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            self.locations.withLock { $0 += locations }
        }
        func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {
            errors.withLock { $0.append(error) }
        }
        var count: Int { locations.withLock { $0.count } }
    }

    @Test func fixesArriveAsGpsdReportsThem() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 30, speed: 15.9, seconds: 20, at: Self.epoch)
        let gpsfake = try GPSFake(epochs: drive)
        let source = GPSDLocationSource(host: "127.0.0.1", port: UInt16(gpsfake.port))
        let manager = LocationManager(source: source)
        let collector = Collector()
        manager.delegate = collector
        manager.startUpdatingLocation()
        defer { manager.stopUpdatingLocation() }
        #expect(waitUntil(timeout: 20) { collector.locations.withLock { $0.last?.timestamp == drive.last?.time } })
        let locations = collector.locations.withLock { $0 }
        #expect(locations.count >= drive.count, "\(locations.count) of \(drive.count)")
        // gpsd's first report of its first epoch is 2D, from the RMC alone (no HDOP yet); then 3D ones.
        for location in locations.dropFirst() {
            let epoch = try #require(drive.first { $0.time == location.timestamp }, "a fix at a time of the drive: \(location)")
            #expect(location.distance(from: Location(coordinate: epoch.coordinate, horizontalAccuracy: 0, timestamp: epoch.time)) < 0.01)
            #expect(abs(location.speed - epoch.speed) < 0.01)
            #expect(abs(location.course - epoch.course) < 0.01)
            #expect(abs(location.horizontalAccuracy - epoch.expectedAccuracy) < 0.05)
            #expect(location.fix == .threeDimensional)
        }
    }

    /// Wake-ups a second of the source's queue while tracking a drive gpsd reports at 6.7 epochs a
    /// second (three sentences each, 50 ms apart), at `best` and at `threeKilometers`.
    @Test func coarseAccuracyWakesAFractionAsOften() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 15, seconds: 400, at: Self.epoch)
        var rates: [LocationAccuracy: Double] = [:]
        for accuracy in [LocationAccuracy.best, .nearestTenMeters, .hundredMeters, .threeKilometers] {
            let gpsfake = try GPSFake(epochs: drive)
            let source = GPSDLocationSource(host: "127.0.0.1", port: UInt16(gpsfake.port))
            let manager = LocationManager(source: source)
            let collector = Collector()
            manager.delegate = collector
            manager.desiredAccuracy = accuracy
            manager.startUpdatingLocation()
            #expect(waitUntil(timeout: 15) { collector.count >= 1 })
            // The first fix is in; from here on, the steady state: 12 s of tracking (a sample at hundredMeters).
            let (before, startTime) = (source.wakeUpCount, ChildProcess.now())
            let watcher = try GPSDWatcher(port: gpsfake.port)
            #expect(waitUntil(timeout: 30) { watcher.fixCount >= 120 }, "gpsd goes on reporting (12 s of the drive)")
            rates[accuracy] = Double(source.wakeUpCount - before) / (ChildProcess.now() - startTime)
            manager.stopUpdatingLocation()
            gpsfake.stop()
        }
        let line = LocationAccuracy.allCases.compactMap { accuracy in rates[accuracy].map { "\(accuracy.rawValue) \(String(format: "%.2f", $0))" } }
        print("gpsd source wake-ups per second while tracking: \(line.joined(separator: ", "))")
        let best = try #require(rates[.best]), coarse = try #require(rates[.threeKilometers])
        #expect(best > 5, "every report wakes it at best: \(best)")
        #expect(coarse < best / 10, "threeKilometers: \(coarse) a second against best's \(best)")
        #expect(try #require(rates[.hundredMeters]) < best / 5)
    }

    @Test func aGpsdThatGoesAwayIsReportedOnceAndReconnectedToWhenItIsBack() throws {
        let drive = GPSFake.drive(from: Self.start, bearing: 90, speed: 10, seconds: 60, at: Self.epoch)
        var gpsfake = try GPSFake(epochs: Array(drive.prefix(15)))
        let port = gpsfake.port
        let source = GPSDLocationSource(host: "127.0.0.1", port: UInt16(port))
        let manager = LocationManager(source: source)
        let collector = Collector()
        manager.delegate = collector
        manager.startUpdatingLocation()
        defer { manager.stopUpdatingLocation() }
        #expect(waitUntil(timeout: 15) { collector.count >= 3 })
        gpsfake.stop()
        #expect(waitUntil(timeout: 10) { !collector.errors.withLock { $0 }.isEmpty })
        let outage = collector.errors.withLock { $0 }
        guard case .sourceUnavailable = outage.first else { Issue.record("\(outage)"); return }
        // Down for a while: tried again with back-off (0.5, 1, 2 s...), reported once.
        let wakeUps = source.wakeUpCount
        #expect(waitUntil(timeout: 10) { source.wakeUpCount >= wakeUps + 3 })
        #expect(collector.errors.withLock { $0 }.count == 1, "one report per outage: \(collector.errors.withLock { $0 })")
        let before = collector.count
        gpsfake = try GPSFake(epochs: Array(drive.dropFirst(20)), port: port)
        #expect(waitUntil(timeout: 40) { collector.count >= before + 5 }, "tracking resumed after gpsd came back")
        gpsfake.stop()
    }

    @Test func aReceiverThatLosesItsFixIsReportedAsLocationUnknown() throws {
        var drive = GPSFake.drive(from: Self.start, bearing: 0, speed: 10, seconds: 30, at: Self.epoch)
        for index in 10..<20 { drive[index].fix = false }
        let gpsfake = try GPSFake(epochs: drive)
        let manager = LocationManager(source: GPSDLocationSource(host: "127.0.0.1", port: UInt16(gpsfake.port)))
        let collector = Collector()
        manager.delegate = collector
        manager.startUpdatingLocation()
        defer { manager.stopUpdatingLocation() }
        #expect(waitUntil(timeout: 20) { collector.locations.withLock { $0.last?.timestamp == drive.last?.time } })
        #expect(collector.errors.withLock { $0 } == [.locationUnknown])
        let times = collector.locations.withLock { $0 }.map(\.timestamp)
        #expect(!times.contains { $0 >= drive[10].time && $0 < drive[20].time }, "no fix while it was lost")
    }
}

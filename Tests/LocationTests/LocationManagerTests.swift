import Foundation
import Location
import Synchronization
import Testing

/// The manager over a scripted source: what it delivers for standard updates (accuracy gate,
/// distance filter), the significant-change service, the background rules, and how often it
/// asks the source for fixes at each accuracy.
struct LocationManagerTests {
    /// Records what the manager tells it (called on the source's thread: no delegate queue).
    final class Recorder: LocationManagerDelegate {
        enum Event: Equatable {
            case location(Location)
            case error(LocationError)
            case enter(String)
            case exit(String)
        }

        let events = Mutex<[Event]>([])

        var all: [Event] { events.withLock { $0 } }
        var locations: [Location] { all.compactMap { if case .location(let location) = $0 { location } else { nil } } }
        var errors: [LocationError] { all.compactMap { if case .error(let error) = $0 { error } else { nil } } }

        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            events.withLock { $0 += locations.map(Event.location) }
        }
        func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {
            events.withLock { $0.append(.error(error)) }
        }
        func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion) {
            events.withLock { $0.append(.enter(region.identifier)) }
        }
        func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion) {
            events.withLock { $0.append(.exit(region.identifier)) }
        }
    }

    let source = ScriptedLocationSource()
    let manager: LocationManager
    let recorder = Recorder()

    init() {
        manager = LocationManager(source: source)
        manager.delegate = recorder
    }

    @Test func nothingRunsUntilAskedAndStoppingLetsTheSourceGo() {
        #expect(source.sampling == nil)
        manager.startUpdatingLocation()
        #expect(source.sampling == .continuous)
        source.emit(Track.fix(0, second: 0))
        #expect(recorder.locations.count == 1)
        #expect(manager.location == Track.fix(0, second: 0))
        manager.stopUpdatingLocation()
        #expect(source.sampling == nil)
        source.emit(Track.fix(10, second: 1))
        #expect(recorder.locations.count == 1)
    }

    @Test func coarserAccuracyTakesFewerFixes() {
        manager.startUpdatingLocation()
        var intervals: [LocationAccuracy: SamplingPolicy?] = [:]
        for accuracy in LocationAccuracy.allCases {
            manager.desiredAccuracy = accuracy
            intervals[accuracy] = source.sampling
        }
        #expect(intervals[.best] == .continuous && intervals[.bestForNavigation] == .continuous)
        #expect(intervals[.nearestTenMeters] == .every(2) && intervals[.hundredMeters] == .every(10))
        #expect(intervals[.kilometer] == .every(30) && intervals[.threeKilometers] == .every(60))
    }

    @Test func aFixMuchWorseThanDesiredIsNotDelivered() {
        manager.startUpdatingLocation()
        manager.desiredAccuracy = .best
        source.emit(Track.fix(0, second: 0, accuracy: 8))
        source.emit(Track.fix(10, second: 1, accuracy: 400))
        #expect(recorder.locations.map(\.horizontalAccuracy) == [8])
        manager.desiredAccuracy = .hundredMeters
        source.emit(Track.fix(20, second: 2, accuracy: 400))
        #expect(recorder.locations.map(\.horizontalAccuracy) == [8, 400], "500 m is acceptable at hundredMeters")
    }

    @Test func theDistanceFilterWaitsForMovement() {
        manager.distanceFilter = 100
        manager.startUpdatingLocation()
        for metres in stride(from: 0.0, through: 400, by: 30) {
            source.emit(Track.fix(metres, second: metres / 30))
        }
        #expect(recorder.locations.map { Int($0.distance(from: Track.fix(0, second: 0)).rounded()) } == [0, 120, 240, 360])
        manager.distanceFilter = nil
        source.emit(Track.fix(370, second: 20))
        #expect(recorder.locations.count == 5)
    }

    @Test func noFixIsReportedOnceAsLocationUnknown() {
        manager.startUpdatingLocation()
        source.emit(.noFix)
        source.emit(.noFix)
        source.emit(Track.fix(0, second: 0))
        source.emit(.noFix)
        #expect(recorder.errors == [.locationUnknown, .locationUnknown])
    }

    @Test func inTheBackgroundWithoutPermissionNoUpdatesAreTakenUntilTheForeground() {
        manager.startUpdatingLocation()
        source.emit(Track.fix(0, second: 0))
        manager.applicationIsInBackground = true
        #expect(source.sampling == nil, "nothing else asked for fixes: the source stops")
        #expect(recorder.errors == [.denied])
        source.emit(Track.fix(10, second: 1))
        manager.applicationIsInBackground = true
        #expect(recorder.errors == [.denied], "said once")
        manager.applicationIsInBackground = false
        #expect(source.sampling == .continuous)
        source.emit(Track.fix(20, second: 2))
        #expect(recorder.locations.count == 2)
    }

    @Test func withPermissionUpdatesGoOnInTheBackground() {
        manager.allowsBackgroundLocationUpdates = true
        manager.startUpdatingLocation()
        manager.applicationIsInBackground = true
        source.emit(Track.fix(0, second: 0))
        #expect(recorder.locations.count == 1 && recorder.errors.isEmpty)
    }

    @Test func significantChangesComeEvery500MetresAndGoOnInTheBackground() {
        manager.startMonitoringSignificantLocationChanges()
        manager.applicationIsInBackground = true
        #expect(source.sampling == .every(LocationManager.significantChangeInterval))
        for metres in stride(from: 0.0, through: 1_600, by: 100) {
            source.emit(Track.fix(metres, second: metres / 10))
        }
        #expect(recorder.locations.map { Int($0.distance(from: Track.fix(0, second: 0)).rounded()) } == [0, 500, 1_000, 1_500])
    }

    @Test func regionsAreMonitoredInTheBackgroundWithoutPermission() {
        let region = CircularRegion(center: Track.start.moved(by: 205, bearing: 0), radius: 50, identifier: "stop")
        manager.startMonitoring(for: region)
        manager.applicationIsInBackground = true
        #expect(source.sampling == .every(50.0 / 30))
        for metres in stride(from: 0.0, through: 400, by: 10) {
            source.emit(Track.fix(metres, second: metres / 10))
        }
        #expect(recorder.all == [.enter("stop"), .exit("stop")])
        #expect(manager.regionStates.first?.inside == false)
    }

    @Test func nonsenseFromTheSourceNeverReachesTheDelegate() {
        manager.startUpdatingLocation()
        let messages = Mutex<[String]>([])
        manager.log = { _, message in messages.withLock { $0.append(message) } }
        source.emit(Track.fix(0, second: 10))
        source.emit(Track.fix(5, second: 9))
        var far = Track.fix(0, second: 11)
        far.coordinate = Coordinate(latitude: 0, longitude: 0)
        source.emit(far)
        source.emit(.dropped("gpsd line dropped: garbage"))
        #expect(recorder.locations.count == 1)
        #expect(messages.withLock { $0 }.filter { $0.hasPrefix("fix dropped") }.count == 2)
        #expect(messages.withLock { $0 }.contains("gpsd line dropped: garbage"))
    }

    @Test func aDelegateQueueGetsTheCallsInOrder() async {
        let queue = DispatchQueue(label: "test.delegate")
        let manager = LocationManager(source: source, delegateQueue: queue)
        manager.delegate = recorder
        manager.startUpdatingLocation()
        for second in 0..<50 { source.emit(Track.fix(Double(second) * 10, second: Double(second))) }
        await withCheckedContinuation { done in queue.async { done.resume() } }
        #expect(recorder.locations.map(\.timestamp) == (0..<50).map { Track.epoch.addingTimeInterval(Double($0)) })
    }
}

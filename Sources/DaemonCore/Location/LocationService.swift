import AppLifecycle
import Foundation
import Location
import Logging
import MPDProtocol

/// The daemon's location updates: the seeds' `CLLocationManager` delegate.
///
/// It owns a ``LocationManager`` over gpsd (``GPSDLocationSource``), tells it the app's state
/// (background, suspended) and whether the `location` background mode allows updates there,
/// and handles what it delivers on the partition's queue: the fixes kept (the last 100, saved
/// as `locations.json` beside the state), the `Background location:` line for each update
/// delivered in the background, the idle events `location` and `region`, and the commands'
/// settings (`locationupdates`, `locationaccuracy`, `locationdistance`).
///
/// `Sendable`: its state is a `QueueBound` of the partition's queue (every access asserts it);
/// the manager calls the delegate methods on gpsd's queue, and each hops to the partition.
package final class LocationService: LocationManagerDelegate {
    /// How the daemon was asked to track.
    package struct Options: Sendable {
        var source: LocationChoice
        /// `location` in `--background-modes`: standard updates go on in the background.
        var backgroundUpdates: Bool
        /// `--regions`: the GPX file of waypoints, read by ``readRegions()`` as the daemon starts.
        var regionFile: String?

        package init(source: LocationChoice, backgroundUpdates: Bool, regionFile: String?) {
            self.source = source
            self.backgroundUpdates = backgroundUpdates
            self.regionFile = regionFile
        }
    }

    /// What the ``LocationListener`` hears.
    package enum Event: Sendable {
        /// New fixes, oldest first.
        case fixes([Location])
        /// A monitored region was entered (`true`) or left.
        case region(String, entered: Bool)
    }

    private struct State {
        var fixes: [Location] = []
        var mode: LocationUpdatesMode = .on
        /// The receiver lost its fix since the last update (`location`'s `mode: none`).
        var fixLost = false
        var saveScheduled = false
        var observers: [any NSObjectProtocol] = []
        /// The waypoints monitored, in the file's order, and by region identifier.
        var regions: [RegionWaypoint] = []
        var waypoints: [String: RegionWaypoint] = [:]
        var started = false
    }

    let manager: LocationManager
    let options: Options
    /// Where the service's state lives and every delegate call hops to.
    private let queue: PartitionQueue
    /// The idle events `location` and `region`.
    private let events: ControlEvents
    private let lifecycle: LifecycleCoordinator
    /// What a region entered plays.
    private let announcements: RegionAnnouncements
    /// Who hears of each fix and region event.
    private let listener: (any LocationListener)?
    private let store: LocationHistoryStore?
    private let logger: Logger
    private let state: QueueBound<State>

    /// - Parameter stateDirectory: where `locations.json` is kept; nil: not kept (`--no-state`).
    /// - Parameter listener: who hears of each fix and region event as it is handled (the web
    ///   clients), on the partition's queue; nil: no one.
    package init(options: Options, queue: PartitionQueue, events: ControlEvents, lifecycle: LifecycleCoordinator, announcements: RegionAnnouncements,
         listener: (any LocationListener)?, stateDirectory: URL?, logger: Logger) {
        self.announcements = announcements
        self.listener = listener
        self.options = options
        self.queue = queue
        self.events = events
        self.lifecycle = lifecycle
        self.logger = logger
        store = stateDirectory.map { LocationHistoryStore(file: $0.appendingPathComponent("locations.json"), logger: logger) }
        manager = LocationManager(source: GPSDLocationSource(host: options.source.host, port: options.source.port))
        state = queue.bound(State())
    }

    /// The waypoints monitored (`regions`), on the partition's queue.
    var regions: [RegionWaypoint] { state.value.regions }

    /// Reads `--regions` (none without it): each waypoint left out is a warning. A file that
    /// cannot be used is a ``DaemonOptionError``; a cancelled task ends the read with `CancellationError`.
    package func readRegions() throws -> [RegionWaypoint] {
        guard let path = options.regionFile else { return [] }
        let read: (waypoints: [RegionWaypoint], problems: [String])
        do {
            read = try RegionFile.read(URL(fileURLWithPath: path))
        } catch let error as CancellationError {
            throw error
        } catch let error as RegionFile.Refusal {
            throw DaemonOptionError("--regions \(path): \(error.description).")
        } catch {
            throw DaemonOptionError("--regions \(path): \(error.localizedDescription)")
        }
        for problem in read.problems { logger.warning("--regions \(path): \(problem)") }
        return read.waypoints
    }

    /// On the partition's queue: restores the fixes kept, follows the app's state, starts updates
    /// and monitors `regions` (``readRegions()``'s).
    package func start(regions: [RegionWaypoint]) {
        queue.assertOwned()
        state.value.started = true
        state.value.regions = regions
        state.value.waypoints = Dictionary(regions.map { ($0.region.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        state.value.fixes = store?.load() ?? []
        let logger = logger
        manager.log = { level, message in
            switch level {
            case .debug: logger.debug("location: \(message)")
            case .info: logger.info("location: \(message)")
            case .warning: logger.warning("location: \(message)")
            }
        }
        manager.delegate = self
        manager.allowsBackgroundLocationUpdates = options.backgroundUpdates
        let application = lifecycle.application
        let center = application.notificationCenter
        let manager = manager
        let allowed = options.backgroundUpdates
        // (in the background, allowed to update there): a suspended daemon takes no standard
        // updates even with the location mode; woken, or in the foreground, it does again.
        for (name, background, permitted) in [(Application.didEnterBackgroundNotification, true, allowed),
                                              (Application.willEnterForegroundNotification, false, allowed),
                                              (Application.didSuspendNotification, true, false),
                                              (Application.didWakeNotification, true, allowed)] {
            state.value.observers.append(center.addObserver(forName: name, object: application, queue: nil) { _ in
                manager.allowsBackgroundLocationUpdates = permitted
                manager.applicationIsInBackground = background
            })
        }
        manager.applicationIsInBackground = application.state == .background || application.state == .suspended
        // With the location mode, standard updates keep a backgrounded daemon from being
        // suspended, as on iOS (``setMode(_:)`` tells the application when that changes).
        application.isUpdatingLocationInBackground = { allowed && manager.isUpdatingLocation }
        for waypoint in regions { manager.startMonitoring(for: waypoint.region) }
        manager.startUpdatingLocation()
        logger.info("location: updates from \(options.source.description)\(regions.isEmpty ? "" : ", \(regions.count) regions")")
    }

    /// Stops the source and writes the fixes kept (at shutdown); returns once written.
    package func stop() async {
        manager.stopUpdatingLocation()
        manager.stopMonitoringSignificantLocationChanges()
        manager.stopMonitoringAllRegions()
        // A daemon stopped before it started (while reading the regions file) loaded no fixes: it keeps the file's.
        let fixes = await queue.run { [state] in state.value.started ? state.value.fixes : nil }
        guard let store, let fixes else { return }
        await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in
            store.save(fixes) { written.resume() }
        }
    }

    // MARK: - What the commands read and set (on the partition's queue)

    /// The fixes kept, oldest first.
    package var fixes: [Location] { state.value.fixes }
    var fixLost: Bool { state.value.fixLost }
    var mode: LocationUpdatesMode { state.value.mode }

    /// `locationupdates`: standard updates on or off, or the significant-change service alone.
    func setMode(_ mode: LocationUpdatesMode) {
        state.value.mode = mode
        switch mode {
        case .on:
            manager.startUpdatingLocation()
            manager.stopMonitoringSignificantLocationChanges()
        case .off:
            manager.stopUpdatingLocation()
            manager.stopMonitoringSignificantLocationChanges()
        case .significant:
            // Started before the standard updates stop, so the source is reconfigured, not reconnected.
            manager.startMonitoringSignificantLocationChanges()
            manager.stopUpdatingLocation()
        }
        lifecycle.application.audioActivityChanged()
    }

    // MARK: - LocationManagerDelegate (on gpsd's queue: each hops to the partition)

    package func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
        queue.async { [self] in
            // A significant change wakes a suspended daemon (standard updates never reach one).
            let wake = state.value.mode == .significant ? beginWake(named: "significant location change") : nil
            defer { wake?.end() }
            state.value.fixLost = false
            for location in locations {
                if lifecycle.isInBackground { Console.line("Background location: \(location.formatted)") }
                state.value.fixes.append(location)
            }
            if state.value.fixes.count > LocationHistoryStore.capacity {
                state.value.fixes.removeFirst(state.value.fixes.count - LocationHistoryStore.capacity)
            }
            scheduleSave()
            events.post([.location])
            listener?.heard(.fixes(locations))
        }
    }

    package func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {
        queue.async { [self] in
            switch error {
            case .locationUnknown:
                state.value.fixLost = true
            case .sourceUnavailable(let why):
                logger.warning("location: \(why); playback is unaffected, trying again with back-off")
            case .denied where options.backgroundUpdates:
                logger.info("location: no updates while suspended; they resume when the daemon is woken or in the foreground")
            case .denied:
                logger.info("location: no updates in the background without the location background mode (--background-modes ...,location); they resume in the foreground")
            }
        }
    }

    package func locationManager(_ manager: LocationManager, didEnterRegion region: CircularRegion) {
        queue.async { [self] in
            let wake = beginWake(named: "region entered")
            defer { wake.end() }
            logger.info("location: entered region \(region.identifier)")
            events.post([.region])
            listener?.heard(.region(region.identifier, entered: true))
            announcements.entered(region.identifier, waypoint: state.value.waypoints[region.identifier])
        }
    }

    package func locationManager(_ manager: LocationManager, didExitRegion region: CircularRegion) {
        queue.async { [self] in
            let wake = beginWake(named: "region left")
            defer { wake.end() }
            logger.info("location: left region \(region.identifier)")
            events.post([.region])
            listener?.heard(.region(region.identifier, entered: false))
        }
    }

    /// As iOS relaunches or wakes an app for a region event or a significant change (they need
    /// no background mode): a suspended daemon wakes into the background for at most
    /// ``eventAllowance`` seconds, handles the event (the line, the announcement, the idle
    /// event) and is suspended again once no task runs, as for a feed's fetch. An announcement
    /// keeps it awake while it plays only with the `audio` background mode.
    private func beginWake(named name: String) -> BackgroundActivity {
        lifecycle.beginBackgroundWake(named: name, allowance: Self.eventAllowance)
    }

    /// Seconds a region event or a significant change may keep a woken daemon in the background.
    static let eventAllowance = 10.0

    /// Asks for a write of the fixes in ``LocationHistoryStore/delay`` seconds, unless one is asked for already.
    private func scheduleSave() {
        guard let store, !state.value.saveScheduled else { return }
        state.value.saveScheduled = true
        let queue = queue
        DispatchQueue.global().asyncAfter(deadline: .now() + LocationHistoryStore.delay) { [state] in
            queue.async {
                state.value.saveScheduled = false
                store.save(state.value.fixes)
            }
        }
    }
}

/// Hears of each fix and region event as ``LocationService`` handles it, on the partition's
/// queue: it must not block.
package protocol LocationListener: Sendable {
    func heard(_ event: LocationService.Event)
}

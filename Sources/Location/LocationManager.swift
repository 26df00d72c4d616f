import Dispatch
import Foundation
import Synchronization

/// Core Location's `CLLocationManager` over a ``LocationSource``: standard updates with
/// ``desiredAccuracy`` and ``distanceFilter``, the significant-change service, region
/// monitoring, and what the app's state allows (``allowsBackgroundLocationUpdates``).
///
/// Every fix from the source passes ``FixSanity`` first (nonsense never reaches anything), then
/// region monitoring (``RegionMonitor``: it needs no permission to run in the background),
/// then, for standard updates, the accuracy gate (a fix much worse than ``desiredAccuracy``
/// is not delivered) and the distance filter; for the significant-change service, 500 m from
/// the last one it delivered.
///
/// `Sendable` without a queue of its own: its state is one `Mutex`, held for the bookkeeping
/// of a setting or a fix and never while the delegate is called. The source is started,
/// reconfigured and stopped under that lock (its contract: it never calls back from those).
public final class LocationManager: Sendable {
    /// How loud a message of the manager is (the owner maps it to its log).
    public enum LogLevel: Sendable { case debug, info, warning }

    /// What one fix or event leads to, delivered after the lock is released.
    private enum Output {
        case locations([Location])
        case error(LocationError)
        case enter(CircularRegion)
        case exit(CircularRegion)
    }

    private struct State {
        weak var delegate: (any LocationManagerDelegate)?
        var log: (@Sendable (LogLevel, String) -> Void)?
        var desiredAccuracy = LocationAccuracy.best
        var distanceFilter: Double?
        var allowsBackgroundLocationUpdates = false
        var applicationIsInBackground = false
        var updating = false
        var significant = false
        var monitor = RegionMonitor()
        var sanity = FixSanity()
        var lastDelivered: Location?
        var lastSignificant: Location?
        var hasFix: Bool?
        var poorAccuracyReported = false
        var deniedReported = false
        /// How the source runs now; nil: stopped.
        var sampling: SamplingPolicy?

        /// Standard updates are on and the app's state allows them.
        var standardActive: Bool { updating && (!applicationIsInBackground || allowsBackgroundLocationUpdates) }
    }

    /// The source of the fixes.
    public let source: any LocationSource
    private let delegateQueue: DispatchQueue?
    private let state = Mutex(State())

    /// Metres from the last significant change to the next (iOS: about 500 m).
    public static let significantChangeDistance = 500.0
    /// Seconds between the fixes taken for the significant-change service alone.
    public static let significantChangeInterval = 10.0

    /// - Parameter delegateQueue: where the delegate is called; nil: on the source's thread, at once.
    public init(source: any LocationSource, delegateQueue: DispatchQueue? = nil) {
        self.source = source
        self.delegateQueue = delegateQueue
    }

    public var delegate: (any LocationManagerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Where the manager's messages go (dropped fixes at debug level, the source's outages as warnings).
    public var log: (@Sendable (LogLevel, String) -> Void)? {
        get { state.withLock { $0.log } }
        set { state.withLock { $0.log = newValue } }
    }

    /// The accuracy wanted, and so how often fixes are taken (``LocationAccuracy/sampleInterval``).
    public var desiredAccuracy: LocationAccuracy {
        get { state.withLock { $0.desiredAccuracy } }
        set { change { $0.desiredAccuracy = newValue; $0.poorAccuracyReported = false } }
    }

    /// Metres the device must move from the last update delivered before the next; nil: none
    /// (`kCLDistanceFilterNone`).
    public var distanceFilter: Double? {
        get { state.withLock { $0.distanceFilter } }
        set { change { $0.distanceFilter = newValue.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } } }
    }

    /// Whether standard updates go on while the app is in the background (it has the
    /// `location` background mode).
    public var allowsBackgroundLocationUpdates: Bool {
        get { state.withLock { $0.allowsBackgroundLocationUpdates } }
        set { change { $0.allowsBackgroundLocationUpdates = newValue } }
    }

    /// Set by the app as it enters and leaves the background (or is suspended): without
    /// ``allowsBackgroundLocationUpdates``, standard updates stop meanwhile (one ``LocationError/denied``
    /// says so) and resume in the foreground; regions and significant changes go on.
    public var applicationIsInBackground: Bool {
        get { state.withLock { $0.applicationIsInBackground } }
        set { change { $0.applicationIsInBackground = newValue; if !newValue { $0.deniedReported = false } } }
    }

    /// The last fix delivered (`CLLocationManager.location`).
    public var location: Location? { state.withLock { $0.lastDelivered } }

    public var isUpdatingLocation: Bool { state.withLock { $0.updating } }
    public var isMonitoringSignificantLocationChanges: Bool { state.withLock { $0.significant } }
    /// How the source runs now (nil: stopped); for tests and `status`.
    public var sampling: SamplingPolicy? { state.withLock { $0.sampling } }

    public func startUpdatingLocation() { change { $0.updating = true } }
    public func stopUpdatingLocation() { change { $0.updating = false } }

    /// An update after each ``significantChangeDistance`` of movement, at the lowest cost; goes
    /// on in the background without the `location` mode.
    public func startMonitoringSignificantLocationChanges() { change { $0.significant = true; $0.lastSignificant = nil } }
    public func stopMonitoringSignificantLocationChanges() { change { $0.significant = false } }

    public var monitoredRegions: [CircularRegion] { state.withLock { $0.monitor.regions } }
    /// Each region and whether the last good fix was inside it.
    public var regionStates: [RegionMonitor.RegionState] { state.withLock { $0.monitor.states } }

    public func startMonitoring(for region: CircularRegion) { change { $0.monitor.add(region) } }
    public func stopMonitoring(for region: CircularRegion) { change { $0.monitor.remove(identifier: region.identifier) } }
    /// Stops monitoring every region at once (one by one, each removal would move the ones after it).
    public func stopMonitoringAllRegions() { change { $0.monitor.removeAll() } }

    // MARK: - Private

    /// Changes settings, then starts, reconfigures or stops the source to match, and says once
    /// when standard updates are refused in the background.
    private func change(_ body: (inout State) -> Void) {
        let outputs = state.withLock { state -> [Output] in
            body(&state)
            var outputs: [Output] = []
            if state.updating && state.applicationIsInBackground && !state.allowsBackgroundLocationUpdates && !state.deniedReported {
                state.deniedReported = true
                outputs.append(.error(.denied))
            }
            let wanted = Self.sampling(for: state)
            guard wanted != state.sampling else { return outputs }
            let wasRunning = state.sampling != nil
            state.sampling = wanted
            if let wanted {
                if !wasRunning { state.sanity.reset() }
                source.start(sampling: wanted) { [weak self] event in self?.handle(event) }
            } else {
                source.stop()
                state.hasFix = nil
            }
            return outputs
        }
        deliver(outputs)
    }

    private static func sampling(for state: State) -> SamplingPolicy? {
        if state.standardActive {
            return state.desiredAccuracy.sampleInterval.map(SamplingPolicy.every) ?? .continuous
        }
        var intervals: [Double] = []
        if state.significant { intervals.append(significantChangeInterval) }
        // A region is looked at often enough that a vehicle at 30 m/s cannot cross it unseen.
        if let smallest = state.monitor.smallestRadius { intervals.append(min(max(smallest / 30, 1), 10)) }
        return intervals.min().map(SamplingPolicy.every)
    }

    private func handle(_ event: LocationSourceEvent) {
        var messages: [(LogLevel, String)] = []
        let outputs = state.withLock { state -> [Output] in
            guard state.sampling != nil else { return [] }
            switch event {
            case .location(let location):
                return process(location, &state, &messages)
            case .noFix:
                guard state.hasFix != false else { return [] }
                state.hasFix = false
                messages.append((.info, "no fix"))
                return state.standardActive ? [.error(.locationUnknown)] : []
            case .unavailable(let why):
                state.hasFix = nil
                return [.error(.sourceUnavailable(why))]
            case .available(let what):
                messages.append((.info, what))
                return []
            case .dropped(let why):
                messages.append((.debug, why))
                return []
            }
        }
        if let log = self.log { for (level, message) in messages { log(level, message) } }
        deliver(outputs)
    }

    /// One fix through the sanity check, the regions, and the standard or significant service.
    private func process(_ location: Location, _ state: inout State, _ messages: inout [(LogLevel, String)]) -> [Output] {
        if let why = state.sanity.check(location) {
            messages.append((.debug, "fix dropped: \(why)"))
            return []
        }
        if state.hasFix != true { messages.append((.info, "fix (\(location.fix.name))")) }
        state.hasFix = true
        var outputs: [Output] = state.monitor.update(with: location).map { event in
            switch event {
            case .enter(let region): .enter(region)
            case .exit(let region): .exit(region)
            }
        }
        if state.standardActive {
            let worst = state.desiredAccuracy.acceptableError
            if location.horizontalAccuracy > worst {
                if !state.poorAccuracyReported {
                    state.poorAccuracyReported = true
                    messages.append((.info, String(format: "fixes of +/- %.0f m are much worse than %@ (%.0f m at most): not delivered",
                                                   location.horizontalAccuracy, state.desiredAccuracy.rawValue, worst)))
                }
                return outputs
            }
            state.poorAccuracyReported = false
            if let filter = state.distanceFilter, let last = state.lastDelivered, location.distance(from: last) < filter {
                return outputs
            }
            state.lastDelivered = location
            state.lastSignificant = location
            outputs.append(.locations([location]))
        } else if state.significant {
            if let last = state.lastSignificant, location.distance(from: last) < Self.significantChangeDistance { return outputs }
            state.lastSignificant = location
            state.lastDelivered = location
            outputs.append(.locations([location]))
        }
        return outputs
    }

    private func deliver(_ outputs: [Output]) {
        guard !outputs.isEmpty, let delegate = self.delegate else { return }
        let work: @Sendable () -> Void = { [self] in
            for output in outputs {
                switch output {
                case .locations(let locations): delegate.locationManager(self, didUpdateLocations: locations)
                case .error(let error): delegate.locationManager(self, didFailWithError: error)
                case .enter(let region): delegate.locationManager(self, didEnterRegion: region)
                case .exit(let region): delegate.locationManager(self, didExitRegion: region)
                }
            }
        }
        if let delegateQueue { delegateQueue.async(execute: work) } else { work() }
    }
}

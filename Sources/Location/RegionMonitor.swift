#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Region monitoring as a value: which monitored regions a fix is inside, and the enter and
/// exit events that follow, without chatter. Pure (no clock, no queue): each call passes the
/// fix, whose own time is the clock, so the rules are tested with made-up tracks.
///
/// The rules, each against a nuisance a GPS fix causes:
/// - A fix whose accuracy is worse than a region's radius changes nothing for that region
///   (it cannot say which side of the edge it is on).
/// - Entering: the fix within the radius (and, for a region with a course range, travelling
///   within it; an unknown course does not count). Exiting: farther than the radius plus the
///   fix's accuracy (hysteresis), so a fix that wanders across the edge does not exit and
///   enter again.
/// - A region entered does not announce an entry again within ``retriggerInterval`` of its
///   last one; its exit is announced only if its entry was.
/// - Several regions entered by one fix are reported in order of distance, nearest first.
public struct RegionMonitor: Sendable {
    /// An enter or exit.
    public enum Event: Hashable, Sendable {
        case enter(CircularRegion)
        case exit(CircularRegion)
    }

    /// What is known about one region.
    public struct RegionState: Hashable, Sendable {
        public var region: CircularRegion
        /// nil until a fix good enough for this region has been seen.
        public var inside: Bool?
        /// When its last entry was announced (the fix's time).
        public var lastEntry: Date?
        /// Whether the current stay inside was announced (so its exit is).
        public var announced = false
    }

    /// The least time between two announced entries of one region, in seconds.
    public var retriggerInterval: Double = 60

    public private(set) var states: [RegionState] = []
    /// Where each identifier is in ``states``: adding a new region costs the same however many
    /// are monitored (a file of waypoints is added one by one).
    private var positions: [String: Int] = [:]
    /// The smallest radius monitored (nil: none), kept as regions come and go.
    public private(set) var smallestRadius: Double?

    public init() {}

    /// The regions, in the order they were added.
    public var regions: [CircularRegion] { states.map(\.region) }

    /// Starts monitoring `region` (one with the same identifier is replaced, its state forgotten).
    public mutating func add(_ region: CircularRegion) {
        remove(identifier: region.identifier)
        positions[region.identifier] = states.count
        states.append(RegionState(region: region))
        smallestRadius = min(smallestRadius ?? region.radius, region.radius)
    }

    public mutating func remove(identifier: String) {
        guard let position = positions.removeValue(forKey: identifier) else { return }
        states.remove(at: position)
        for index in position..<states.count { positions[states[index].region.identifier] = index }
        smallestRadius = states.lazy.map(\.region.radius).min()
    }

    public mutating func removeAll() {
        states.removeAll()
        positions.removeAll()
        smallestRadius = nil
    }

    /// Applies a fix; returns the events it causes (exits first, then entries by distance).
    public mutating func update(with location: Location) -> [Event] {
        guard location.fix != .none, location.coordinate.isValid else { return [] }
        let accuracy = max(location.horizontalAccuracy, 0)
        var exits: [Event] = []
        var entries: [(distance: Double, event: Event)] = []
        for index in states.indices {
            let region = states[index].region
            guard accuracy <= region.radius else { continue }
            let distance = region.center.distance(to: location.coordinate)
            if states[index].inside == true {
                guard distance > region.radius + accuracy else { continue }
                states[index].inside = false
                if states[index].announced { exits.append(.exit(region)) }
                states[index].announced = false
            } else if distance <= region.radius {
                if let course = region.course, !course.contains(location.course) {
                    // Inside, but travelling the wrong way (or not known to travel): not entered yet;
                    // a later fix inside that turns into the range enters it.
                    states[index].inside = false
                    continue
                }
                states[index].inside = true
                if let last = states[index].lastEntry, location.timestamp.timeIntervalSince(last) < retriggerInterval {
                    continue
                }
                states[index].announced = true
                states[index].lastEntry = location.timestamp
                entries.append((distance, .enter(region)))
            } else {
                states[index].inside = false
            }
        }
        return exits + entries.sorted { $0.distance < $1.distance }.map(\.event)
    }
}

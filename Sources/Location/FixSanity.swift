import Foundation

/// The checks every fix passes before anything else looks at it, whatever its source: a
/// receiver or a gpsd that sends nonsense must not move the daemon across the world or back in
/// time. What fails is dropped, with the reason returned for a debug log.
///
/// - Coordinates that are not finite or out of range, accuracies or speeds that are not finite.
/// - Time going backwards: a fix older than the last one accepted (the same time is allowed:
///   gpsd reports a 2D then a 3D fix of one epoch).
/// - A jump: a fix that would mean travelling faster than ``maximumSpeed`` from the last one
///   accepted. Three such fixes in a row that agree with each other are believed (the receiver
///   really is elsewhere: a replayed log, a receiver moved while off): the jump is accepted.
public struct FixSanity: Sendable {
    /// Metres per second: faster than any airliner over ground.
    public var maximumSpeed = 1_000.0
    /// How many consistent fixes in a row make a jump believed.
    public var fixesToBelieveAJump = 3

    private var last: Location?
    private var candidate: (location: Location, count: Int)?

    public init() {}

    /// Forgets the last fix (a new source, a restart of tracking).
    public mutating func reset() {
        last = nil
        candidate = nil
    }

    /// nil if `location` may be used; else why not.
    public mutating func check(_ location: Location) -> String? {
        guard location.coordinate.isValid else {
            return "coordinates out of range: \(location.coordinate.latitude), \(location.coordinate.longitude)"
        }
        for (name, value) in [("altitude", location.altitude), ("accuracy", location.horizontalAccuracy),
                              ("vertical accuracy", location.verticalAccuracy), ("speed", location.speed), ("course", location.course)]
        where !value.isFinite {
            return "\(name) is not a number"
        }
        guard location.timestamp.timeIntervalSince1970.isFinite else { return "no time" }
        guard let last else {
            self.last = location
            return nil
        }
        let elapsed = location.timestamp.timeIntervalSince(last.timestamp)
        guard elapsed >= 0 else {
            return "time went backwards by \(String(format: "%.3f", -elapsed)) s"
        }
        let distance = location.distance(from: last)
        if distance > maximumSpeed * max(elapsed, 1) {
            if let candidate, location.timestamp >= candidate.location.timestamp,
               location.distance(from: candidate.location) <= maximumSpeed * max(location.timestamp.timeIntervalSince(candidate.location.timestamp), 1) {
                self.candidate = (location, candidate.count + 1)
            } else {
                candidate = (location, 1)
            }
            if let candidate, candidate.count >= fixesToBelieveAJump {
                self.candidate = nil
                self.last = location
                return nil
            }
            return "jump of \(Int(distance)) m in \(String(format: "%.3f", elapsed)) s"
        }
        candidate = nil
        self.last = location
        return nil
    }
}

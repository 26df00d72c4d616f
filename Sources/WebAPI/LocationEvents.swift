#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Location

/// The location events of the WebSocket API (docs/websocket.md): one `location` per fix as the
/// daemon takes it, `region` when a monitored region is entered or left, and `locations`, the
/// fixes kept (the last 100), for a client that just connected, so its track is there at once.
/// Pure.
enum LocationEvents {
    /// `{"event": "location", "latitude": 37.334821, "longitude": -122.033509, "accuracy": 5, ...}`.
    static func event(_ fix: Location) -> JSONValue {
        .object([("event", .string("location"))] + fields(fix))
    }

    /// `{"event": "locations", "fixes": [{"latitude": ..., ...}, ...]}`, oldest first.
    static func history(_ fixes: [Location]) -> JSONValue {
        .object([("event", .string("locations")), ("fixes", .array(fixes.map { .object(fields($0)) }))])
    }

    /// `{"event": "region", "region": "home", "state": "enter"}` (or `"exit"`).
    static func region(_ identifier: String, entered: Bool) -> JSONValue {
        .object([("event", .string("region")), ("region", .string(identifier)), ("state", .string(entered ? "enter" : "exit"))])
    }

    /// A fix's fields: degrees (6 decimals: 0.1 m), metres, m/s, degrees; what the receiver does
    /// not know is `null`. `time` is UTC to the second as `location` prints it, `timestamp` the
    /// same instant in seconds since 1970 with its fraction.
    static func fields(_ fix: Location) -> [(String, JSONValue)] {
        func known(_ value: Double) -> JSONValue { value >= 0 ? .double(value) : .null }
        return [
            ("latitude", .double(fix.coordinate.latitude)), ("longitude", .double(fix.coordinate.longitude)),
            ("accuracy", known(fix.horizontalAccuracy)),
            ("altitude", fix.fix == .threeDimensional ? .double(fix.altitude) : .null),
            ("speed", known(fix.speed)), ("course", known(fix.course)),
            ("time", .string(Location.utc(fix.timestamp))), ("timestamp", .double(fix.timestamp.timeIntervalSince1970)),
        ]
    }
}

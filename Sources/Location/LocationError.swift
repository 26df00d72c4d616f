/// What a ``LocationManager`` reports instead of a fix, as Core Location's `CLError`.
public enum LocationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The receiver has no fix now (gpsd's mode 0 or 1); updates go on, and fixes come when it has one
    /// (`kCLErrorLocationUnknown`).
    case locationUnknown
    /// The source cannot be reached (gpsd not running, or gone): it is tried again with back-off.
    case sourceUnavailable(String)
    /// Standard updates were asked for in the background without the `location` background mode
    /// (`allowsBackgroundLocationUpdates` false): none are taken until the foreground.
    case denied

    public var description: String {
        switch self {
        case .locationUnknown: "no fix"
        case .sourceUnavailable(let why): "location source unavailable: \(why)"
        case .denied: "location updates are not allowed in the background (no location background mode)"
        }
    }
}

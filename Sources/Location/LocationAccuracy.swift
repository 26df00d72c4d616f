/// How accurate the fixes should be, as Core Location's `desiredAccuracy`: also the power
/// knob. The finest settings watch the receiver's every report; coarser ones take one fix
/// and then let the connection to gpsd fall silent until the next is due (``sampleInterval``),
/// so the process wakes up a fraction as often.
public enum LocationAccuracy: String, Sendable, CaseIterable, Codable {
    case bestForNavigation
    case best
    case nearestTenMeters
    case hundredMeters
    case kilometer
    case threeKilometers

    /// The accuracy asked for, in metres.
    public var metres: Double {
        switch self {
        case .bestForNavigation: 5
        case .best: 10
        case .nearestTenMeters: 10
        case .hundredMeters: 100
        case .kilometer: 1_000
        case .threeKilometers: 3_000
        }
    }

    /// The worst horizontal accuracy delivered at this setting, in metres: five times what was
    /// asked (at least 50 m, a consumer receiver's usual error in a street). A fix much worse
    /// than that is not delivered as if it were good; it is dropped until the fixes improve
    /// (or the app asks for less).
    public var acceptableError: Double { max(metres * 5, 50) }

    /// Seconds between two fixes taken from the receiver; nil: every report, as it comes.
    /// A vehicle at 30 m/s covers a tenth of the accuracy asked for in each interval from
    /// `hundredMeters` on.
    public var sampleInterval: Double? {
        switch self {
        case .bestForNavigation, .best: nil
        case .nearestTenMeters: 2
        case .hundredMeters: 10
        case .kilometer: 30
        case .threeKilometers: 60
        }
    }
}

/// A part of the daemon whose changes `idle` reports (`changed: <name>`).
///
/// The cases are declared in mpd's bit order (`idle_names[]`), which is the order in which
/// several changes are listed in one idle reply (`playlist` before `player` before `mixer`,
/// `database` before `update`).
public enum Subsystem: String, Sendable, Hashable, CaseIterable {
    case database
    case storedPlaylist = "stored_playlist"
    case playlist
    case player
    case mixer
    case output
    case options
    case sticker
    case update
    case subscription
    case message
    case neighbor
    case mount
    case partition
    // Not mpd's (location updates): after its subsystems, so mpd's order is untouched.
    /// A location update was delivered.
    case location
    /// A monitored region was entered or left.
    case region
    /// A loudness measurement finished (`loudnessscan`, a downloaded episode).
    case loudness

    /// The name used on the wire, e.g. `stored_playlist`.
    public var protocolName: String { rawValue }

    /// Looks a name up case-insensitively, as mpd does (`idle PLAYER` works). `queue` is not a name.
    public init?(protocolName name: String) {
        guard let match = Subsystem.allCases.first(where: { ASCII.equalsIgnoringCase($0.rawValue, name) }) else {
            return nil
        }
        self = match
    }

    /// Sorts subsystems into the order mpd reports them.
    public static func inReportingOrder(_ subsystems: some Sequence<Subsystem>) -> [Subsystem] {
        let set = Set(subsystems)
        return allCases.filter(set.contains)
    }
}

/// ASCII-only case folding, matching mpd's `StringEqualsCaseASCII`.
enum ASCII {
    static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && zip(lhs.utf8, rhs.utf8).allSatisfy { lower($0) == lower($1) }
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }
}

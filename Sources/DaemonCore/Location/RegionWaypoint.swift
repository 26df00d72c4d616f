#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Location

/// One waypoint of `--regions`: a circle to monitor and the file its entry announces.
package struct RegionWaypoint: Hashable, Sendable {
    /// Its identifier is the waypoint's `<name>`.
    var region: CircularRegion
    /// The announcement (an absolute path, or relative to the GPX file when read); nil: none.
    var audio: URL?

    var name: String { region.identifier }
}

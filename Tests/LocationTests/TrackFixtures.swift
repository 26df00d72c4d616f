import Foundation
import Location

/// Fixes along made-up tracks, one a second from a fixed time.
enum Track {
    static let start = Coordinate(latitude: 37.33482105, longitude: -122.03350886)
    static let epoch = Date(timeIntervalSince1970: 1_795_773_913)

    /// A fix `metres` from ``start`` along `bearing`, at second `second`.
    static func fix(_ metres: Double, bearing: Double = 0, second: Double, accuracy: Double = 5, course: Double? = nil,
                    speed: Double = 10) -> Location {
        Location(coordinate: start.moved(by: metres, bearing: bearing), altitude: 10, horizontalAccuracy: accuracy, verticalAccuracy: 8,
                 speed: speed, course: course ?? bearing, timestamp: epoch.addingTimeInterval(second), fix: .threeDimensional)
    }
}

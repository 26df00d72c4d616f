#if canImport(Glibc)
import Glibc
#endif

/// A point on the Earth (WGS 84 degrees), as Core Location's `CLLocationCoordinate2D`, with
/// the geometry the manager and region monitoring need: great-circle distance and bearing.
///
/// The Earth is taken as a sphere of the mean radius (haversine): within 0.5 % of the
/// ellipsoid everywhere, far inside a GPS fix's error at the distances that matter here
/// (a region's radius, a distance filter, the 500 m of a significant change).
public struct Coordinate: Hashable, Sendable, Codable {
    public var latitude: Double
    public var longitude: Double

    /// The mean Earth radius (IUGG), in metres.
    public static let earthRadius = 6_371_008.8

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Finite, latitude within ±90° and longitude within ±180°
    /// (`CLLocationCoordinate2DIsValid`).
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// The great-circle distance to `other`, in metres (haversine, stable for short distances).
    public func distance(to other: Coordinate) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = φ2 - φ1
        let Δλ = (other.longitude - longitude) * .pi / 180
        let a = pow(sin(Δφ / 2), 2) + cos(φ1) * cos(φ2) * pow(sin(Δλ / 2), 2)
        return 2 * Self.earthRadius * asin(min(1, sqrt(a)))
    }

    /// The initial bearing towards `other`, in degrees clockwise from true north, 0 ..< 360
    /// (what a fix's `course` is compared with).
    public func bearing(to other: Coordinate) -> Double {
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δλ = (other.longitude - longitude) * .pi / 180
        let y = sin(Δλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)
        let degrees = atan2(y, x) * 180 / .pi
        return (degrees + 360).truncatingRemainder(dividingBy: 360)
    }

    /// The point `distance` metres away along the initial bearing `bearing` (degrees); the
    /// tests drive along tracks made with it.
    public func moved(by distance: Double, bearing: Double) -> Coordinate {
        let δ = distance / Self.earthRadius
        let θ = bearing * .pi / 180
        let φ1 = latitude * .pi / 180, λ1 = longitude * .pi / 180
        let φ2 = asin(sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sin(φ2))
        var longitude = λ2 * 180 / .pi
        longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
        return Coordinate(latitude: φ2 * 180 / .pi, longitude: longitude)
    }
}

/// A circle to watch for, as Core Location's `CLCircularRegion`: a centre, a radius in metres
/// and an identifier, with, beyond Core Location, the directions of travel that count as
/// entering it (a stop announced only on the way into town).
public struct CircularRegion: Hashable, Sendable, Codable {
    public var identifier: String
    public var center: Coordinate
    /// Metres.
    public var radius: Double
    /// nil: any direction (or none known) enters it.
    public var course: CourseRange?

    public init(center: Coordinate, radius: Double, identifier: String, course: CourseRange? = nil) {
        self.center = center
        self.radius = radius
        self.identifier = identifier
        self.course = course
    }

    /// Whether the coordinate lies within the circle (`CLCircularRegion.contains`).
    public func contains(_ coordinate: Coordinate) -> Bool {
        center.distance(to: coordinate) <= radius
    }
}

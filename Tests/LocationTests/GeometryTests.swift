import Foundation
import Location
import Testing

/// The haversine distance, the initial bearing and the point along a bearing, against values
/// worked out by hand on the mean-radius sphere.
struct GeometryTests {
    @Test func aDegreeOfLongitudeAtTheEquatorIsTheSphere360thOfItsCircumference() {
        let distance = Coordinate(latitude: 0, longitude: 0).distance(to: Coordinate(latitude: 0, longitude: 1))
        #expect(abs(distance - 2 * .pi * Coordinate.earthRadius / 360) < 0.001)
    }

    @Test func aDegreeOfLongitudeAtSixtyDegreesIsHalfAsLong() {
        let equator = Coordinate(latitude: 0, longitude: 0).distance(to: Coordinate(latitude: 0, longitude: 0.01))
        let sixty = Coordinate(latitude: 60, longitude: 0).distance(to: Coordinate(latitude: 60, longitude: 0.01))
        #expect(abs(sixty / equator - 0.5) < 1e-4)
    }

    @Test func shortDistancesAreExactToTheCentimetre() {
        let start = Coordinate(latitude: 37.33482105, longitude: -122.03350886)
        for metres in [0.05, 1.0, 49.9, 50.0, 500.0, 12_345.0] {
            let end = start.moved(by: metres, bearing: 73)
            #expect(abs(start.distance(to: end) - metres) < 0.01, "\(metres) m")
        }
        #expect(start.distance(to: start) == 0)
    }

    @Test func antipodesAreHalfACircumferenceApart() {
        let distance = Coordinate(latitude: 10, longitude: 20).distance(to: Coordinate(latitude: -10, longitude: -160))
        // Haversine's asin loses digits near the antipode: 20,000 km to within a metre.
        #expect(abs(distance - .pi * Coordinate.earthRadius) < 1)
    }

    @Test func bearingsOfTheCardinalDirections() {
        let origin = Coordinate(latitude: 0, longitude: 0)
        #expect(abs(origin.bearing(to: Coordinate(latitude: 1, longitude: 0)) - 0) < 1e-9)
        #expect(abs(origin.bearing(to: Coordinate(latitude: 0, longitude: 1)) - 90) < 1e-9)
        #expect(abs(origin.bearing(to: Coordinate(latitude: -1, longitude: 0)) - 180) < 1e-9)
        #expect(abs(origin.bearing(to: Coordinate(latitude: 0, longitude: -1)) - 270) < 1e-9)
    }

    @Test func theBearingOfAPointMovedAlongABearingIsThatBearing() {
        let start = Coordinate(latitude: 48.8566, longitude: 2.3522)
        for bearing in stride(from: 0.0, to: 360, by: 15) {
            let end = start.moved(by: 1_000, bearing: bearing)
            let back = start.bearing(to: end)
            let difference = min(abs(back - bearing), 360 - abs(back - bearing))
            #expect(difference < 1e-6, "\(bearing)° came back as \(back)°")
        }
    }

    @Test func movingAcrossTheAntimeridianWrapsTheLongitude() {
        let end = Coordinate(latitude: 0, longitude: 179.9999).moved(by: 100, bearing: 90)
        #expect(end.isValid)
        #expect(end.longitude < -179.99)
    }

    @Test func validityIsCoreLocationsRange() {
        #expect(Coordinate(latitude: 90, longitude: 180).isValid)
        #expect(!Coordinate(latitude: 90.0001, longitude: 0).isValid)
        #expect(!Coordinate(latitude: 0, longitude: -180.0001).isValid)
        #expect(!Coordinate(latitude: .nan, longitude: 0).isValid)
        #expect(!Coordinate(latitude: 0, longitude: .infinity).isValid)
    }

    @Test func courseRangesWrapAcrossNorth() throws {
        let north = try #require(CourseRange("350-20"))
        #expect(north.contains(355) && north.contains(0) && north.contains(20) && north.contains(350))
        #expect(!north.contains(21) && !north.contains(180) && !north.contains(349.9))
        #expect(!north.contains(-1), "an unknown course is in no range")
        let east = try #require(CourseRange("45-105"))
        #expect(east.contains(45) && east.contains(90) && !east.contains(106) && !east.contains(0))
        #expect(CourseRange("45") == nil && CourseRange("a-b") == nil && CourseRange("0-361") == nil)
        #expect(north.description == "350-20")
    }

    @Test func theDescriptionIsCoreLocations() {
        let location = Location(coordinate: Coordinate(latitude: 37.33482105, longitude: -122.03350886), horizontalAccuracy: 5,
                                speed: 15.9, course: 255.94, timestamp: Date(timeIntervalSince1970: 1_795_773_913))
        #expect(location.formatted == "<+37.33482105,-122.03350886> +/- 5.00m (speed 15.90 mps / course 255.94) @ 2026-11-27T10:05:13Z")
    }
}

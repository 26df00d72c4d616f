import Foundation
import Location
import Testing

/// What gpsd or a receiver may send that must never move the daemon: out-of-range values, time
/// going backwards, a jump across the world (and when such a jump is finally believed).
struct FixSanityTests {
    @Test func outOfRangeAndNonFiniteValuesAreDropped() {
        var sanity = FixSanity()
        var bad = Track.fix(0, second: 0)
        bad.coordinate.latitude = .nan
        #expect(sanity.check(bad) != nil)
        bad = Track.fix(0, second: 0)
        bad.coordinate.longitude = 181
        #expect(sanity.check(bad) != nil)
        bad = Track.fix(0, second: 0)
        bad.speed = .infinity
        #expect(sanity.check(bad)?.contains("speed") == true)
        #expect(sanity.check(Track.fix(0, second: 0)) == nil)
    }

    @Test func timeGoingBackwardsIsDroppedTheSameTimeIsNot() {
        var sanity = FixSanity()
        #expect(sanity.check(Track.fix(0, second: 10)) == nil)
        #expect(sanity.check(Track.fix(5, second: 10)) == nil, "gpsd's 2D then 3D fix of one epoch")
        #expect(sanity.check(Track.fix(10, second: 9.5))?.contains("backwards") == true)
        #expect(sanity.check(Track.fix(10, second: 11)) == nil)
    }

    @Test func aJumpAcrossTheWorldIsDroppedUntilThreeFixesAgree() {
        var sanity = FixSanity()
        #expect(sanity.check(Track.fix(0, second: 0)) == nil)
        var far = Track.fix(0, second: 1)
        far.coordinate = Coordinate(latitude: -33.86, longitude: 151.21)
        #expect(sanity.check(far)?.contains("jump") == true)
        #expect(sanity.check(Track.fix(10, second: 2)) == nil, "back on the track: the outlier was one")
        far.timestamp = Track.epoch.addingTimeInterval(3)
        #expect(sanity.check(far) != nil)
        far.timestamp = Track.epoch.addingTimeInterval(4)
        #expect(sanity.check(far) != nil)
        far.timestamp = Track.epoch.addingTimeInterval(5)
        #expect(sanity.check(far) == nil, "three in a row agree: the receiver is elsewhere")
        #expect(sanity.check(Track.fix(20, second: 6)) != nil, "and now the old track is the jump")
    }

    @Test func fastButPossibleTravelIsNotAJump() {
        var sanity = FixSanity()
        #expect(sanity.check(Track.fix(0, second: 0)) == nil)
        #expect(sanity.check(Track.fix(250, second: 1)) == nil, "an airliner's 250 m/s")
        #expect(sanity.check(Track.fix(100_250, second: 600)) == nil, "100 km in ten minutes without a fix")
    }
}

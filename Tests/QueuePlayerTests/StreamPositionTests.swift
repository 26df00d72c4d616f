@testable import QueuePlayer
import Testing

/// How the render thread's measurement is brought forward to a later answer of the device
/// (``StreamPosition/Snapshot/updated(with:)``), at 1,000 frames a second.
@Suite struct StreamPositionTests {
    /// Measured at 1 s: 3,000 frames written, 500 of them not yet heard; the device had played
    /// 2,400 of its stream 7 (its count differs from the stream's by a constant, here 100: the
    /// sink counts from its opening, the stream from the player's last load).
    static let measured = StreamPosition.Snapshot(
        generation: 1, framesWritten: 3_000, delay: 500, measuredAt: 1_000_000_000, sampleRate: 1_000, isRunning: true,
        played: PlayedFrames(stream: 7, frames: 2_400, measuredAt: 1_000_000_000))

    @Test func whatTheDevicePlayedSinceComesOffTheDelay() {
        let later = Self.measured.updated(with: PlayedFrames(stream: 7, frames: 2_550, measuredAt: 1_200_000_000))
        #expect(later.delay == 350)
        #expect(later.measuredAt == 1_200_000_000)
        #expect(later.audibleFrame(at: 1_200_000_000) == 2_650)
        // Carried forward from the answer, not from the render thread's measurement.
        #expect(later.audibleFrame(at: 1_300_000_000) == 2_750)
    }

    /// The device stalled after the measurement: the time carried forward from it would say
    /// 2,800 at 1.3 s; the device's answer at 1.3 s says 2,550, and that is the position.
    @Test func aDeviceThatStalledHoldsThePositionBack() {
        #expect(Self.measured.audibleFrame(at: 1_300_000_000) == 2_800)
        let stalled = Self.measured.updated(with: PlayedFrames(stream: 7, frames: 2_450, measuredAt: 1_300_000_000))
        #expect(stalled.audibleFrame(at: 1_300_000_000) == 2_550)
    }

    /// Never more than was written: the answer cannot take the delay below zero.
    @Test func notPastWhatWasWritten() {
        let later = Self.measured.updated(with: PlayedFrames(stream: 7, frames: 3_100, measuredAt: 2_000_000_000))
        #expect(later.delay == 0)
        #expect(later.audibleFrame(at: 2_500_000_000) == 3_000)
    }

    /// An answer that cannot be tied to the measurement changes nothing: another stream (the
    /// device was restarted since), an earlier answer, a count behind the measurement's, or a
    /// measurement that carries no count.
    @Test func anAnswerThatDoesNotFitIsIgnored() {
        let answers = [
            PlayedFrames(stream: 8, frames: 2_450, measuredAt: 1_200_000_000),
            PlayedFrames(stream: 7, frames: 2_450, measuredAt: 900_000_000),
            PlayedFrames(stream: 7, frames: 2_300, measuredAt: 1_200_000_000),
        ]
        for answer in answers {
            #expect(Self.measured.updated(with: answer) == Self.measured, "\(answer)")
        }
        var uncounted = Self.measured
        uncounted.played = nil
        #expect(uncounted.updated(with: PlayedFrames(stream: 7, frames: 2_450, measuredAt: 1_200_000_000)) == uncounted)
    }

    /// The count goes through the sequence lock with the rest, and "none" stays none.
    @Test func theCountIsPublishedWithTheMeasurement() {
        let position = StreamPosition()
        position.publish(Self.measured)
        #expect(position.read() == Self.measured)
        var uncounted = Self.measured
        uncounted.played = nil
        position.publish(uncounted)
        #expect(position.read().played == nil)
    }
}

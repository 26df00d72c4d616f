import Foundation
@testable import QueuePlayer
import Testing

/// The timeline's rules on their own: no player, no render thread, no device. Render events
/// and the device's measurements are made by hand, at 1,000 frames a second so that a frame is
/// a millisecond.
@Suite struct TimelineTests {
    static let rate = 1_000

    /// A decoder that is never decoded from: the timeline reads only its format.
    final class StubDecoder: Decoder {
        let format = AudioFormat(sampleRate: TimelineTests.rate, channelCount: 2)
        let frameCount: Int64
        let metadata = ItemMetadata()
        init(frameCount: Int64) { self.frameCount = frameCount }
        func decode(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int { 0 }
        func seek(toFrame frame: Int64) throws(DecoderError) {}
    }

    static func item(_ name: String) -> PlayerItem { PlayerItem(url: URL(fileURLWithPath: "/nonexistent/\(name).mp3")) }

    /// The render thread's measurement: `audible` frames heard at time 0, `written` in the
    /// stream, playing at 1,000 frames a second.
    static func measured(_ timeline: Timeline, audible: Int64, written: Int64? = nil) -> StreamPosition.Snapshot {
        let written = written ?? audible + 500
        return StreamPosition.Snapshot(generation: timeline.generation, framesWritten: written, delay: written - audible,
                                       measuredAt: 0, sampleRate: rate, isRunning: true)
    }

    /// Milliseconds as the clock's nanoseconds.
    static func ms(_ milliseconds: UInt64) -> UInt64 { milliseconds * 1_000_000 }

    static func event(_ kind: RenderEvent.Kind, _ renderItem: RenderItem, at frame: Int64, of timeline: Timeline) -> RenderEvent {
        RenderEvent(kind: kind, generation: timeline.generation, renderID: renderItem.id, streamFrame: frame)
    }

    /// Every step hearing the stream up to `frame` takes, as text.
    static func steps(_ timeline: inout Timeline, to frame: Double) -> [String] {
        var steps: [String] = []
        while let step = timeline.advance(toAudibleFrame: frame) {
            switch step {
            case .entered(let item): steps.append("entered \(item.url.deletingPathExtension().lastPathComponent)")
            case .ended(let item, let failure, let nextStarts):
                steps.append("ended \(item.url.deletingPathExtension().lastPathComponent)"
                             + (failure == nil ? "" : " failed") + (nextStarts ? ", next starts" : ""))
            }
        }
        return steps
    }

    /// A loaded for 1 s, B handed over to follow it, as the player's `load` does.
    static func playingAThenB() -> (Timeline, a: RenderItem, b: RenderItem) {
        var timeline = Timeline()
        let a = timeline.startGeneration(with: item("a"), decoder: StubDecoder(frameCount: 1_000), at: 0)!
        let b = timeline.handOver(item("b"), decoder: StubDecoder(frameCount: 2_000), startFrame: 0)
        timeline.requestNext(b)
        timeline.setRendererIdle(false)
        return (timeline, a, b)
    }

    @Test func theNextItemIsHeardAtItsFirstFrameNotWhenItIsDecoded() {
        var (timeline, a, b) = Self.playingAThenB()
        timeline.record(Self.event(.started, a, at: 0, of: timeline))
        // The render thread decoded past the boundary long before it is heard.
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        timeline.record(Self.event(.started, b, at: 1_000, of: timeline))

        #expect(Self.steps(&timeline, to: 0) == ["entered a"])
        #expect(Self.steps(&timeline, to: 999.9) == [])
        #expect(timeline.audibleItem == a.item)
        #expect(timeline.pendingItems == [a.item, b.item])
        #expect(Self.steps(&timeline, to: 1_000) == ["ended a, next starts", "entered b"])
        #expect(timeline.audibleItem == b.item)
        timeline.forgetHeard()
        #expect(timeline.pendingItems == [b.item])
    }

    /// A change of rate within an item is a piece of it: crossed without the item being entered
    /// or ended again, still one pending item (not a queue out of step, reloaded), its time
    /// continuous and moving at the piece's rate, and its decoder kept until the item is heard out.
    @Test func aChangeOfRateIsAPieceOfTheItemNotAnotherItem() {
        var (timeline, a, b) = Self.playingAThenB()
        timeline.record(Self.event(.started, a, at: 0, of: timeline))
        // From stream frame 400 (item frame 400) A plays at 2x: its last 600 frames in 300.
        var paced = Self.event(.paced, a, at: 400, of: timeline)
        paced.itemFrame = 400
        paced.rate = 2
        timeline.record(paced)
        timeline.record(Self.event(.finished, a, at: 700, of: timeline))
        timeline.record(Self.event(.started, b, at: 700, of: timeline))
        #expect(timeline.pendingItems == [a.item, b.item])
        #expect(Self.steps(&timeline, to: 300) == ["entered a"])
        #expect(Self.steps(&timeline, to: 500) == [])
        timeline.forgetHeard()
        #expect(timeline.pendingItems == [a.item, b.item])
        #expect(timeline.renderItem(a.id) != nil)
        let seconds = timeline.audibleSeconds(of: a.item, in: Self.measured(timeline, audible: 500), at: 0)
        #expect(seconds == 0.6)
        #expect(timeline.audibleSpan(of: a.item)?.rate == 2)
        #expect(Self.steps(&timeline, to: 700) == ["ended a, next starts", "entered b"])
    }

    @Test func anEndHeardBeforeTheNextItemsStartIsReportedWaitsForIt() {
        var (timeline, a, b) = Self.playingAThenB()
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        // B's start is on its way (requested, the render thread plays): A's end waits, so the
        // player does not take B for missing and load it again over what is written.
        #expect(Self.steps(&timeline, to: 1_200) == ["entered a"])
        #expect(timeline.requestedNextItem == b.item)
        timeline.record(Self.event(.started, b, at: 1_000, of: timeline))
        #expect(timeline.requestedNextItem == nil)
        #expect(Self.steps(&timeline, to: 1_200) == ["ended a, next starts", "entered b"])
    }

    @Test func withNothingToFollowTheEndIsHeardWhenTheRenderThreadDrains() {
        var timeline = Timeline()
        let a = timeline.startGeneration(with: Self.item("a"), decoder: StubDecoder(frameCount: 1_000), at: 0)!
        timeline.setRendererIdle(false)
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        timeline.record(Self.event(.drained, a, at: 1_000, of: timeline))
        #expect(timeline.latestIsDecoded)
        #expect(Self.steps(&timeline, to: 1_000) == ["entered a", "ended a"])
    }

    @Test func aFailureIsHeardWhereTheItemsFramesEnd() {
        var (timeline, a, b) = Self.playingAThenB()
        a.failure.withLock { $0 = DecoderError(url: a.item.url, reason: .corrupt("damaged")) }
        timeline.record(Self.event(.failed, a, at: 400, of: timeline))
        timeline.record(Self.event(.started, b, at: 400, of: timeline))
        #expect(Self.steps(&timeline, to: 399) == ["entered a"])
        #expect(Self.steps(&timeline, to: 400) == ["ended a failed, next starts", "entered b"])
    }

    @Test func theAudibleTimeFollowsTheDeviceAcrossItems() throws {
        var (timeline, a, b) = Self.playingAThenB()
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        timeline.record(Self.event(.started, b, at: 1_000, of: timeline))

        // 1,500 frames written, 600 of them still in the device: 900 heard, 0.9 s into A.
        let snapshot = Self.measured(timeline, audible: 900, written: 1_500)
        let heard = try #require(timeline.audibleFrame(in: snapshot, at: 0))
        #expect(Self.steps(&timeline, to: heard) == ["entered a"])
        #expect(timeline.audibleSeconds(of: a.item, in: snapshot, at: 0) == 0.9)
        #expect(timeline.audibleItemFrame(in: snapshot, at: 0) == 900)
        // A's time stops at its end, however far the stream has gone.
        #expect(timeline.audibleSeconds(of: a.item, in: snapshot, at: Self.ms(300)) == 1.0)

        // 250 ms later the device has played 250 more frames: 150 into B.
        let later = try #require(timeline.audibleFrame(in: snapshot, at: Self.ms(250)))
        #expect(later == 1_150)
        #expect(Self.steps(&timeline, to: later) == ["ended a, next starts", "entered b"])
        timeline.restartAudibleTime()
        #expect(timeline.audibleSeconds(of: b.item, in: snapshot, at: Self.ms(250)) == 0.15)
        #expect(timeline.audibleItemFrame(in: snapshot, at: Self.ms(250)) == 150)
        // Interpolation never passes what was written: at 2 s the stream has only 1,500 frames.
        #expect(timeline.audibleSeconds(of: b.item, in: snapshot, at: Self.ms(2_000)) == 0.5)
    }

    @Test func theAudibleTimeNeverRunsBackwardsWithinAnItem() {
        var (timeline, _, _) = Self.playingAThenB()
        let a = timeline.pendingItems[0]
        #expect(Self.steps(&timeline, to: 0) == ["entered a"])
        #expect(timeline.audibleSeconds(of: a, in: Self.measured(timeline, audible: 500), at: 0) == 0.5)
        // A new measurement with a longer delay puts the audible frame earlier.
        #expect(timeline.audibleSeconds(of: a, in: Self.measured(timeline, audible: 450), at: 0) == 0.5)
        // A new current item's time starts afresh.
        timeline.restartAudibleTime()
        #expect(timeline.audibleSeconds(of: a, in: Self.measured(timeline, audible: 450), at: 0) == 0.45)
    }

    @Test func aSeekStartsANewGenerationWhereItWasSoughtAndIgnoresTheOld() throws {
        var (timeline, a, b) = Self.playingAThenB()
        let stale = Self.measured(timeline, audible: 900)
        #expect(Self.steps(&timeline, to: 900) == ["entered a"])

        // Sought to 30 s in A: before it is heard, its time is where it will start.
        let loaded = timeline.startGeneration(with: a.item, decoder: StubDecoder(frameCount: 60_000), at: 30_000)
        let sought = try #require(loaded)
        #expect(sought.id != a.id)
        #expect(timeline.audibleItem == nil)
        #expect(timeline.audibleSeconds(of: a.item, in: stale, at: 0) == 30.0)
        // The old generation's measurement and events are stale.
        #expect(timeline.audibleFrame(in: stale, at: 0) == nil)
        timeline.record(RenderEvent(kind: .started, generation: timeline.generation - 1, renderID: b.id, streamFrame: 1_000))
        #expect(timeline.pendingItems == [a.item])
        #expect(timeline.requestedNextItem == nil)

        let snapshot = Self.measured(timeline, audible: 100)
        #expect(Self.steps(&timeline, to: 100) == ["entered a"])
        #expect(timeline.audibleSeconds(of: a.item, in: snapshot, at: 0) == 30.1)
        #expect(timeline.audibleItemFrame(in: snapshot, at: 0) == 30_100)
    }

    @Test func anItemHeldAtItsEndStaysAtItsDuration() {
        var (timeline, a, _) = Self.playingAThenB()
        a.item.markReady(StubDecoder(frameCount: 1_000))
        timeline.holdAtEnd()
        #expect(timeline.isHeldAtEnd)
        #expect(timeline.audibleSeconds(of: a.item, in: Self.measured(timeline, audible: 5_000), at: 0) == 1.0)
        timeline.releaseFromEnd()
        #expect(!timeline.isHeldAtEnd)
        #expect(timeline.audibleSeconds(of: nil, in: Self.measured(timeline, audible: 0), at: 0) == nil)
    }

    @Test func theNextWakeUpIsTheEarliestOfTheBoundaryAndTheNextCallDue() {
        var (timeline, a, _) = Self.playingAThenB()
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        // Its first frame is heard by the measurement, but the timeline has not been advanced
        // to it: the wake-up is when it was heard (the player then wakes at once).
        let early = Self.measured(timeline, audible: 300)
        #expect(timeline.nextWakeUp(of: a.item, in: early, at: Self.ms(10)) { _ in nil } == 0)

        let snapshot = Self.measured(timeline, audible: 800, written: 1_500)
        #expect(Self.steps(&timeline, to: 800) == ["entered a"])
        // A's end is heard 200 ms from now; a call due at 0.85 s, 50 ms from now, comes first.
        #expect(timeline.nextWakeUp(of: a.item, in: snapshot, at: 0) { _ in nil } == Self.ms(200))
        #expect(timeline.nextWakeUp(of: a.item, in: snapshot, at: 0) { seconds in
            seconds == 0.8 ? 0.85 : nil
        } == Self.ms(50))
        // Never longer than the longest sleep.
        let far = Self.measured(timeline, audible: 100, written: 1_500)
        #expect(timeline.nextWakeUp(of: a.item, in: far, at: 0) { _ in nil } == Timeline.longestSleep)
    }

    /// Measured again later at the same frame, the device stands still: the next look is a
    /// tick away, not when the next call would be due if it played (a fraction of a tick).
    @Test func aDeviceThatStandsStillIsLookedAtOnceATick() {
        var (timeline, a, _) = Self.playingAThenB()
        #expect(Self.steps(&timeline, to: 0) == ["entered a"])
        let due: (Double) -> Double? = { _ in 0.601 }   // the next call: item time 601 ms
        var measured = Self.measured(timeline, audible: 600)
        measured.measuredAt = Self.ms(100)
        #expect(timeline.nextWakeUp(of: a.item, in: measured, at: Self.ms(100), nextDue: due) == Self.ms(101))
        // Measured again 5 ms later, still at 600: it stands still.
        measured.measuredAt = Self.ms(105)
        #expect(timeline.nextWakeUp(of: a.item, in: measured, at: Self.ms(105), nextDue: due)
                == Self.ms(105) + Timeline.starvedPollInterval)
        // The same measurement looked at again (no new one): nothing is known to stand still.
        #expect(timeline.nextWakeUp(of: a.item, in: measured, at: Self.ms(105), nextDue: due) == Self.ms(106))
        // It plays again: back to the time the call is due.
        measured = Self.measured(timeline, audible: 601)
        measured.measuredAt = Self.ms(120)
        #expect(timeline.nextWakeUp(of: a.item, in: measured, at: Self.ms(120), nextDue: { _ in 0.605 }) == Self.ms(124))
    }

    @Test func aStarvedOrUnknownStreamIsLookedAtAgainSoonNotAtOnce() {
        var (timeline, a, _) = Self.playingAThenB()
        timeline.record(Self.event(.finished, a, at: 1_000, of: timeline))
        #expect(Self.steps(&timeline, to: 0) == ["entered a"])
        // A's end is not written yet and its extrapolated time has passed: the stream is starved.
        let starved = Self.measured(timeline, audible: 600, written: 700)
        #expect(timeline.nextWakeUp(of: a.item, in: starved, at: Self.ms(900)) { _ in nil }
                == Self.ms(900) + Timeline.starvedPollInterval)
        // Nothing written yet (just loaded): the first write is on its way, so sooner.
        let loaded = Self.measured(timeline, audible: 0, written: 0)
        #expect(timeline.nextWakeUp(of: a.item, in: loaded, at: Self.ms(1_500)) { _ in nil }
                == Self.ms(1_500) + Timeline.positionPollInterval)
        // A measurement of the last generation, or of a stream that does not run, says nothing.
        var stopped = starved
        stopped.isRunning = false
        #expect(timeline.nextWakeUp(of: a.item, in: stopped, at: 0) { _ in nil } == Timeline.positionPollInterval)
        var stale = starved
        stale.generation -= 1
        #expect(timeline.nextWakeUp(of: a.item, in: stale, at: 0) { _ in nil } == Timeline.positionPollInterval)
    }
}

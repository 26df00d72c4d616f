import QueuePlayer
import TestSupport
import Testing

/// With several outputs, how far the device has played is the pacing output's, and each
/// hand-over of the pace starts a stream of its own, so the player never brings one
/// output's measurement forward with another's count.
@Suite struct MultiOutputPlayedFramesTests {
    let clock = VirtualClock()
    let format = AudioFormat(sampleRate: 44_100, channelCount: 2)
    let chunk = [Int16](repeating: 0, count: 2 * 441)

    func makeSink() throws -> (MultiOutputSink, ScriptedPlayedSink, ScriptedPlayedSink) {
        let first = ScriptedPlayedSink(name: "first", clock: clock)
        let second = ScriptedPlayedSink(name: "second", clock: clock)
        // Both count their streams from 1: the same numbers, different devices.
        first.set(delay: 300, played: PlayedFrames(stream: 1, frames: 1_000, measuredAt: 10))
        second.set(delay: 700, played: PlayedFrames(stream: 1, frames: 5_000, measuredAt: 20))
        let multiple = MultiOutputSink(outputs: [first, second], enabled: [true, true])
        try multiple.configure(format)
        return (multiple, first, second)
    }

    func write(_ sink: MultiOutputSink) throws {
        _ = try chunk.withUnsafeBytes { try sink.write($0, frameCount: 441) }
    }

    @Test func thePacingOutputsCountIsTheOneMeasuredAndAnswered() throws {
        let (multiple, _, _) = try makeSink()
        try write(multiple)
        let measured = multiple.measureDelay()
        #expect(measured.delay == 300)
        let played = try #require(measured.played, "the pacing output's count was not passed on")
        #expect(played.frames == 1_000 && played.measuredAt == 10)
        let answer = try #require(multiple.playedFrames(), "the pacing output's answer was not passed on")
        #expect(answer == played, "asked from another thread, the same output's count of the same stream")
    }

    @Test func aHandOverOfThePaceStartsAStreamOfItsOwn() throws {
        let (multiple, _, second) = try makeSink()
        try write(multiple)
        let before = try #require(multiple.measureDelay().played)
        multiple.setEnabled(false, output: 0)
        try write(multiple)
        #expect(second.framesWritten == 882, "the second output played on through the hand-over")
        let measured = multiple.measureDelay()
        #expect(measured.delay == 700, "the second output paces now")
        let after = try #require(measured.played)
        #expect(after.frames == 5_000)
        #expect(after.stream != before.stream, "the two outputs' counts, both of their stream 1, were taken for one stream")
        #expect(multiple.playedFrames()?.stream == after.stream)
        // And back: a third stream, not the first one again.
        multiple.setEnabled(true, output: 0)
        try write(multiple)
        let back = try #require(multiple.measureDelay().played)
        #expect(back.frames == 1_000)
        #expect(back.stream != before.stream && back.stream != after.stream, "a hand-over back reused an earlier stream number")
    }

    @Test func anOutputOpenedAgainStartsAStreamOfItsOwn() throws {
        let (multiple, _, _) = try makeSink()
        try write(multiple)
        let before = try #require(multiple.measureDelay().played)
        // The same output paces after a new configure, and says the same stream number (a
        // sink that numbers its streams per opening could).
        try multiple.configure(format)
        try write(multiple)
        let after = try #require(multiple.measureDelay().played)
        #expect(after.frames == before.frames)
        #expect(after.stream != before.stream, "a count of the output opened again was taken for one of its stream before")
        multiple.close()
        #expect(multiple.playedFrames() == nil, "closed, the multiple sink passed on an answer")
    }

    /// The outputs still answer (the double does, open or closed); the multiple sink does not
    /// ask them.
    @Test func whileTheNullSinkPacesNothingIsAnswered() throws {
        let (multiple, _, _) = try makeSink()
        multiple.setEnabled(false, output: 0)
        multiple.setEnabled(false, output: 1)
        try write(multiple)
        #expect(multiple.measureDelay().played == nil)
        #expect(multiple.playedFrames() == nil)
    }

    @Test func anOutputThatCannotTellLeavesThePlayerToCarryTheTimeForward() throws {
        let (multiple, first, _) = try makeSink()
        first.set(delay: 300, played: nil)
        try write(multiple)
        #expect(multiple.measureDelay().played == nil)
        #expect(multiple.playedFrames() == nil)
    }
}

import Foundation
import TestSupport
import Testing

/// The play modes at the gapless hand-over: whatever `random`, `repeat`, `single` and `consume`
/// say comes next, what alsa-lib's `file` plugin captures is exactly libmpg123's gapless decode
/// of the tones in the order the daemon played them (its `Now playing:` lines), no sample added
/// or lost at any boundary; and a mode changed while a tone plays decides the next boundary.
///
/// A mode changed "mid-tone" is sent in the same command list as the `play` that starts the
/// tone: nothing else runs in between, and the render thread, half a second ahead at most, is
/// far from the end of that (longer) tone, even on a loaded machine.
@Suite(.serialized) struct GaplessModesTests {
    /// Seconds per tone: longer than the device buffer the render thread runs ahead by (500 ms),
    /// so the controller picks each look-ahead while the tone before it plays, as on a real device.
    static let tone = 0.7
    /// The first tone where a mode changes while it plays: time to spare for a controller that
    /// a loaded machine holds up between `play` and the change.
    static let long = 1.5

    @Test func randomPlaysEveryToneOnceInTheDaemonsOrderSampleExact() throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.tone, Self.tone, Self.tone])
        try daemon.addAll()
        try daemon.run("random 1", "play")
        let status = try daemon.waitForStatus(timeout: 15) { $0["state"] == "stop" }
        #expect(status["state"] == "stop" && status["random"] == "1", "\(status)")
        let order = daemon.started
        #expect(order.sorted() == [0, 1, 2], "random mode plays each song once: \(order)")
        expectSameAudio(try daemon.finish(), daemon.expected(order), "random \(order)")
    }

    /// Random with repeat: the order wraps around (drawing a new one), exact across the wrap;
    /// repeat turned off in the second pass ends playback at that pass's end.
    @Test func randomWithRepeatWrapsAroundSampleExact() throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.tone, Self.tone])
        try daemon.addAll()
        try daemon.run("random 1", "repeat 1", "play")
        let heard = daemon.waitForStarted(count: 3, timeout: 15)
        try daemon.run("repeat 0")
        try #require(heard.count >= 3, "the queue did not wrap around: \(heard); \(daemon.process.standardError)")
        let status = try daemon.waitForStatus(timeout: 15) { $0["state"] == "stop" }
        #expect(status["state"] == "stop", "\(status)")
        let order = daemon.started
        // Each pass of the random order plays each song once.
        #expect(order.count == 4 && Set(order.prefix(2)) == [0, 1] && Set(order.suffix(2)) == [0, 1], "\(order)")
        expectSameAudio(try daemon.finish(), daemon.expected(order), "random and repeat: \(order)")
    }

    /// Single mode, set while the first tone plays: playback pauses exactly at its end, on the
    /// next song; `play` goes on from that song's first sample. `oneshot` turns itself off there.
    @Test(arguments: ["1", "oneshot"])
    func singleStopsExactlyAtTheToneEnd(mode: String) throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.long, Self.tone, Self.tone])
        try daemon.addAll()
        try daemon.run("play 0", "single \(mode)")
        var status = try daemon.waitForStatus(timeout: 10) { $0["state"] != "play" && $0["song"] != "0" }
        #expect(status["state"] == "pause" && status["song"] == "1", "\(status)")
        #expect(status["single"] == (mode == "1" ? "1" : "0"), "\(status)")
        #expect(Double(status["elapsed"] ?? "") == 0, "paused at the next song's start: \(status)")
        guard mode == "oneshot" else {
            expectSameAudio(try daemon.finish(), daemon.expected([0]), "single \(mode)")
            return
        }
        // Resumed: the song paused on plays from its first sample, and the rest of the queue after it.
        try daemon.run("play")
        status = try daemon.waitForStatus(timeout: 10) { $0["state"] == "stop" }
        #expect(status["state"] == "stop", "\(status)")
        #expect(daemon.started == [0, 1, 2])
        expectSameAudio(try daemon.finish(), daemon.expected([0, 1, 2]), "single \(mode)")
    }

    /// Random mode turned on, and off, while the first tone plays: the look-ahead chosen under
    /// the old mode is replaced, and the next boundary follows the new one.
    @Test(arguments: [true, false])
    func randomChangedMidToneDecidesTheNextBoundary(turnOn: Bool) throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.long, Self.tone, Self.tone])
        try daemon.addAll()
        if !turnOn { try daemon.run("random 1") }
        try daemon.run("play 0", turnOn ? "random 1" : "random 0")
        let status = try daemon.waitForStatus(timeout: 15) { $0["state"] == "stop" }
        #expect(status["state"] == "stop", "\(status)")
        let order = daemon.started
        #expect(order.first == 0 && order.sorted() == [0, 1, 2], "\(order)")
        if !turnOn { #expect(order == [0, 1, 2]) }
        expectSameAudio(try daemon.finish(), daemon.expected(order), "random turned \(turnOn ? "on" : "off"): \(order)")
    }

    /// Repeat turned on while the last tone plays wraps around to the first, exact across the
    /// wrap; turned off while that one plays, the queue ends after the last again.
    @Test func repeatChangedMidToneDecidesTheNextBoundary() throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.tone, Self.long])
        try daemon.addAll()
        try daemon.run("play 1", "repeat 1")
        daemon.waitForStarted(count: 2, timeout: 10)
        try daemon.run("repeat 0")
        let status = try daemon.waitForStatus(timeout: 10) { $0["state"] == "stop" }
        #expect(status["state"] == "stop", "\(status)")
        #expect(daemon.started == [1, 0, 1])
        expectSameAudio(try daemon.finish(), daemon.expected([1, 0, 1]), "repeat on, then off")
    }

    /// The queue edited while the first tone plays (the song queued after it moved away, then
    /// deleted): the look-ahead is replaced by the song that now follows, the hand-over exact.
    @Test func theQueueEditedMidToneDecidesTheNextBoundary() throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.long, Self.tone, Self.tone])
        try daemon.addAll()
        try daemon.run("play 0", "move 2 1", "delete 2")
        let status = try daemon.waitForStatus(timeout: 15) { $0["state"] == "stop" }
        #expect(status["state"] == "stop" && status["playlistlength"] == "2", "\(status)")
        #expect(daemon.started == [0, 2])
        expectSameAudio(try daemon.finish(), daemon.expected([0, 2]), "moved and deleted")
    }

    /// Consume, set while the first tone plays: each tone leaves the queue at its end, the
    /// hand-over still exact; `oneshot` consumes one and turns itself off.
    @Test(arguments: ["1", "oneshot"])
    func consumeRemovesEachToneAtItsBoundary(mode: String) throws {
        let daemon = try CapturingDaemon(toneSeconds: [Self.long, Self.tone])
        try daemon.addAll()
        try daemon.run("play 0", "consume \(mode)")
        let status = try daemon.waitForStatus(timeout: 15) { $0["state"] == "stop" }
        #expect(status["state"] == "stop", "\(status)")
        #expect(status["playlistlength"] == (mode == "1" ? "0" : "1"), "\(status)")
        #expect(status["consume"] == (mode == "1" ? "1" : "0"), "\(status)")
        #expect(daemon.started == [0, 1])
        expectSameAudio(try daemon.finish(), daemon.expected([0, 1]), "consume \(mode)")
    }
}

import Foundation
import HTTPStreaming
import QueuePlayer
import Testing
import TestSupport

/// On-demand resources (a length, `Accept-Ranges: bytes`) over a scripted server: what is heard
/// is the file decoded in one go, whatever the connection does: cut at chosen byte offsets,
/// stalled, a range answered whole; gapless with files and other streams; a resource changed
/// under us fails the item; a seek asks for a range.
@Suite(.serialized) struct OnDemandStreamTests {
    static let file = TestMedia.directory.appendingPathComponent("01-morning-sine.mp3")
    static let second = TestMedia.directory.appendingPathComponent("04-night-pluck.mp3")

    @Test func playsByteExact() async throws {
        let server = try ScriptedFileServer(try Data(contentsOf: Self.file))
        let playback = StreamPlayback([server.url])
        let item = try #require(playback.player.items().first)
        #expect(item.isStream)
        #expect(playback.runToEnd())
        let expected = try StreamPlayback.reference(Self.file)
        #expect(playback.sink.captured == expected, "\(StreamPlayback.firstDifference(playback.sink.captured, expected))")
        #expect(item.status == .readyToPlay)
        #expect(!item.isLive)
        #expect(server.responses == 1)
        try await playback.shutdown()
    }

    @Test func cutsAndStallsResumeWithRangesByteExact() async throws {
        var faults = ScriptedFileServer.Faults()
        faults.cutAfter = [0: 50_001, 1: 40_000]
        faults.stallAfter = [2: 10_000]
        let body = try Data(contentsOf: Self.file)
        let server = try ScriptedFileServer(body, faults: faults)
        let playback = StreamPlayback([server.url])
        #expect(playback.runToEnd())
        let expected = try StreamPlayback.reference(Self.file)
        #expect(playback.sink.captured == expected, "\(StreamPlayback.firstDifference(playback.sink.captured, expected))")
        let requests = server.server.requests
        #expect(requests.count == 4, "\(requests)")
        #expect(requests.first?.header("Range") == nil)
        #expect(requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" }, "\(requests)")
        // Each resumption asks for the bytes after those received (the client may not have had
        // all a cut connection sent: its last chunks can be lost with it).
        let starts = requests.dropFirst().map { $0.header("Range").flatMap { Int($0.dropFirst("bytes=".count).dropLast()) } ?? -1 }
        #expect(starts.count == 3 && starts[0] > 0 && starts[0] <= 50_001 && starts[1] > starts[0] && starts[1] <= starts[0] + 40_000
                && starts[2] > starts[1] && starts[2] <= starts[1] + 10_000, "\(starts)")
        try await playback.shutdown()
    }

    @Test func aRangeAnsweredWholeSkipsTheBytesAlreadyHad() async throws {
        var faults = ScriptedFileServer.Faults()
        faults.cutAfter = [0: 70_000]
        faults.ignoreRange = [1]
        let server = try ScriptedFileServer(try Data(contentsOf: Self.file), faults: faults)
        let playback = StreamPlayback([server.url])
        #expect(playback.runToEnd())
        let expected = try StreamPlayback.reference(Self.file)
        #expect(playback.sink.captured == expected, "\(StreamPlayback.firstDifference(playback.sink.captured, expected))")
        #expect(server.responses == 2)
        try await playback.shutdown()
    }

    @Test(arguments: [false, true]) func aResourceChangedUnderUsFailsTheItem(serverIgnoresIfRange: Bool) async throws {
        var faults = ScriptedFileServer.Faults()
        faults.cutAfter = [0: 70_000]
        faults.changedFrom = 1
        faults.ignoreIfRange = serverIgnoresIfRange
        let server = try ScriptedFileServer(try Data(contentsOf: Self.file), faults: faults)
        let playback = StreamPlayback([server.url])
        let item = try #require(playback.player.items().first)
        #expect(playback.runToEnd())
        #expect(item.status == .failed)
        #expect(item.error?.why.contains("changed") == true, "\(String(describing: item.error))")
        try await playback.shutdown()
    }

    @Test func gaplessBetweenAFileAndStreamsAndBetweenTwoStreams() async throws {
        let first = try ScriptedFileServer(try Data(contentsOf: Self.file))
        let second = try ScriptedFileServer(try Data(contentsOf: Self.second))
        let playback = StreamPlayback([Self.second, first.url, second.url])
        #expect(playback.runToEnd())
        let expected = try StreamPlayback.reference(Self.second) + StreamPlayback.reference(Self.file) + StreamPlayback.reference(Self.second)
        #expect(playback.sink.captured == expected, "\(StreamPlayback.firstDifference(playback.sink.captured, expected))")
        try await playback.shutdown()
    }

    @Test func seekingAsksForARange() async throws {
        let body = try Data(contentsOf: Self.file)
        let server = try ScriptedFileServer(body)
        let playback = StreamPlayback([server.url])
        let item = try #require(playback.player.items().first)
        #expect(playback.run { item.status == .readyToPlay && playback.player.timeControlStatus == .playing })
        let duration = try #require(item.duration?.seconds)
        let done = Recorder<Bool>()
        playback.player.seek(to: MediaTime(seconds: duration / 2)) { done.append($0) }
        #expect(done.all == [true])
        #expect(playback.run { playback.player.currentTime().seconds > duration / 2 + 0.5 })
        let ranges = server.server.requests.compactMap { $0.header("Range") }
        let offset = ranges.first.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) } ?? 0
        #expect(offset > body.count / 3 && offset < body.count * 2 / 3, "\(ranges)")
        try await playback.shutdown()
    }
}


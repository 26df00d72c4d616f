import Foundation
import TestSupport
import Testing

/// `rangeid` on the daemon in process, at real-time pace (the null output): a song with a
/// range plays only that part and hands over to the next song at its end, as mpd plays it.
/// The files are 18 and 20 s long; the ranges last a second each, and every wait allows 8 s: a
/// daemon that played a whole file could not pass, one that plays the ranges passes on a loaded
/// machine.
@Suite("rangeid playback", .serialized)
struct RangePlaybackTests {
    @Test func aRangeEndsItsSongAndTheNextPlaysItsOwnRange() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        for request in ["add \"01-morning-sine.mp3\"", "add \"02-evening-triangle.mp3\"", "rangeid 1 :1", "rangeid 2 19:", "play 0"] {
            #expect(try client.request(request) == ["OK"], "\(request)")
        }
        let onSecond = try daemon.waitForStatus(timeout: 8) { replyValue($0, "songid") == "2" }
        #expect(replyValue(onSecond, "songid") == "2", "the first song's range ended it: \(onSecond)")
        let duration = replyValue(onSecond, "duration").flatMap(Double.init) ?? -1
        // mpd counts the file's encoder delay and padding in its end (20.035 s); here it is 20.000 s.
        #expect(abs(duration - 1) < 0.1, "the second song lasts its range, 19 s to its end: \(onSecond)")
        #expect((replyValue(onSecond, "elapsed").flatMap(Double.init) ?? 99) < duration,
                "elapsed counts from the range's start: \(onSecond)")
        let stopped = try daemon.waitForStatus(timeout: 8) { replyValue($0, "state") == "stop" }
        #expect(replyValue(stopped, "state") == "stop", "the queue ended with the second range: \(stopped)")
        let blocks = try client.request("playlistinfo")
        #expect(blocks.filter { $0.hasPrefix("Range: ") } == ["Range: 0.000-1.000", "Range: 19.000-"])
    }

    /// The next song is handed to the player ahead of time (gapless); a range given to it then
    /// is handed again: it plays cut, and the song being heard cannot be edited (mpd's words).
    @Test func aRangeOnTheSongHandedAheadApplies() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        for request in ["add \"01-morning-sine.mp3\"", "add \"02-evening-triangle.mp3\"", "play 0"] {
            #expect(try client.request(request) == ["OK"], "\(request)")
        }
        try daemon.waitForElapsed(atLeast: 0.2)
        #expect(try client.request("rangeid 1 1:2") == ["ACK [4@0] {rangeid} Cannot edit the current song"])
        #expect(try client.request("rangeid 2 19:") == ["OK"])
        #expect(try client.request("seekcur 17.5") == ["OK"])
        let onSecond = try daemon.waitForStatus(timeout: 8) { replyValue($0, "songid") == "2" }
        let duration = replyValue(onSecond, "duration").flatMap(Double.init) ?? -1
        #expect(replyValue(onSecond, "songid") == "2" && abs(duration - 1) < 0.1, "\(onSecond)")
        let stopped = try daemon.waitForStatus(timeout: 8) { replyValue($0, "state") == "stop" }
        #expect(replyValue(stopped, "state") == "stop", "the second song played only its last second: \(stopped)")
    }
}

import Foundation
import TestSupport
import Testing

/// `rangeid` on the daemon as a process: ranges are kept in the state saved at SIGTERM. (How
/// ranges play: DaemonInProcessTests' suite of the same name.)
@Suite("rangeid kept across a restart", .serialized)
struct RangePlaybackTests {
    /// mpd's state file keeps a song's `Range:`; so does the saved state, across SIGTERM.
    @Test func rangesAreKeptAcrossARestart() throws {
        let stateHome = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let arguments = ["--music-directory", TestMedia.directory.path, "--output", "null"]
        var daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        for request in ["add \"01-morning-sine.mp3\"", "add \"02-evening-triangle.mp3\"", "rangeid 2 1.5:4"] {
            _ = try daemon.request(request)
        }
        #expect(try daemon.request("playlistid 2")["Range"] == "1.500-4.000")
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 5) == 0)

        daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        defer { daemon.process.terminate() }
        let song = try daemon.request("playlistinfo 1")
        #expect(song["file"] == "02-evening-triangle.mp3" && song["Range"] == "1.500-4.000" && song["duration"] == "2.500", "\(song)")
        #expect(try daemon.request("playlistinfo 0")["Range"] == nil)
    }
}

import Foundation
import TestSupport
import Testing

/// The daemon's output dies under it (its sound server crashes) and comes back: the
/// daemon says so, waits without spinning, and plays on from where it was heard.
@Suite(.serialized) struct OutputRecoveryTests {
    @Test func playbackGoesOnFromWhereItWasWhenTheSoundServerComesBack() throws {
        let setup = try PulsePlayingDaemon(device: "pulsenull")
        defer { setup.stop() }
        let (pulse, daemon) = (setup.pulse, setup.daemon)

        let playing = try daemon.waitForStatus(timeout: 10) { $0["state"] == "play" && $0.elapsedSeconds >= 2 }
        try #require(playing.elapsedSeconds >= 2, "never played: \(playing); stderr: \(daemon.process.standardError)")

        let heard = try daemon.status().elapsedSeconds
        pulse.kill()
        let killedAt = ChildProcess.now()

        // The output is reported unavailable while the state stays `play`.
        let waiting = try daemon.waitForStatus(timeout: 3) { $0["error"]?.contains("unavailable") == true }
        #expect(waiting["state"] == "play", "\(waiting)")
        #expect(waiting["error"]?.contains("unavailable") == true,
                "the lost output is not reported: \(waiting); stderr: \(daemon.process.standardError)")
        #expect(daemon.waitForStandardError { $0.contains("audio output failed") }, "the log says nothing: \(daemon.process.standardError)")
        let frozen = waiting.elapsedSeconds
        #expect(abs(frozen - heard) <= 0.5, "heard \(heard) s when the server died; the daemon holds \(frozen) s")

        // While the server is away: the position holds, and the daemon idles.
        let cpuBefore = daemon.cpuSeconds
        let wallBefore = ChildProcess.now()
        var sawOtherPosition: [String: String]?
        // The server stays away 3 s, and the daemon is watched for 2 s of it at least.
        while ChildProcess.now() < max(killedAt + 3, wallBefore + 2) {
            let status = try daemon.status()
            if status.elapsedSeconds != frozen || status["error"]?.contains("unavailable") != true { sawOtherPosition = status }
            usleep(100_000)
        }
        let cpuShare = (daemon.cpuSeconds - cpuBefore) / (ChildProcess.now() - wallBefore)
        #expect(sawOtherPosition == nil, "the position or the state moved without an output: \(sawOtherPosition!)")
        #expect(cpuShare < 0.05, "the daemon used \(Int(cpuShare * 100)) % of a core while the output was away")

        try pulse.restart()
        let back = ChildProcess.now()
        let resumed = try daemon.waitForStatus(timeout: 5) { $0["error"] == nil && $0.elapsedSeconds > frozen }
        let resumedAfter = ChildProcess.now() - back
        try #require(resumed["error"] == nil && resumed.elapsedSeconds > frozen,
                     "no playback after the server came back: \(resumed); stderr: \(daemon.process.standardError)")
        print("output recovery: heard \(heard) s, held \(frozen) s, \(Int(cpuShare * 1000)) ‰ CPU while away, playing again \(resumedAfter) s after the server returned")
        #expect(resumedAfter <= 1.0, "playing again only \(resumedAfter) s after the server returned")
        #expect(daemon.waitForStandardError { $0.contains("audio output is back") }, "the log misses the return: \(daemon.process.standardError)")

        // And it plays on, in real time, from there.
        let onward = try daemon.waitForStatus(timeout: 3) { $0.elapsedSeconds >= frozen + 1.5 }
        #expect(onward.elapsedSeconds >= frozen + 1.5 && onward["state"] == "play", "\(onward)")
        #expect(daemon.process.isRunning)
    }
}

import Foundation
import Testing
import TestSupport

/// `--buffer-time`: the ALSA device buffer the daemon asks for (a user's trade of wake-ups for
/// volume latency), seen from the sound server behind ALSA's pulse plugin.
@Suite struct BufferTimeTests {
    /// With a 2 s buffer the server comes to hold more than a second of the daemon's audio; with
    /// the default 500 ms it cannot, so an option that does not reach the device fails this.
    @Test func theBufferAskedForIsWhatTheSoundServerHolds() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let daemon = try LifecycleDaemon(["--buffer-time", "2000", "--output", "alsa:pulsenull", "--no-state",
                                          "--media", TestMedia.directory.path],
                                         environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
        #expect(daemon.waitForStandardError(timeout: 10) { $0.contains("output: ALSA device pulsenull, buffer 2000 ms") })
        var largest = 0.0
        let held = waitUntil(timeout: 10) {
            largest = max(largest, (try? pulse.bufferLatencies().max()) ?? 0)
            return largest > 1.0
        }
        #expect(held, "the server held at most \(largest) s of the daemon's audio")
    }

    /// A buffer time out of range, or not a number, is refused before anything starts.
    @Test func aBufferTimeOutOfRangeIsAnError() throws {
        for value in ["99", "5001", "-500", "99999999999999999999", "half"] {
            let daemon = try ChildProcess(["--buffer-time", value, "--output", "null", "--once", TestMedia.all[0].path])
            #expect(daemon.wait(timeout: 10) == 64, "--buffer-time \(value)")
            #expect(daemon.standardError.contains("buffer-time"), "--buffer-time \(value): \(daemon.standardError)")
        }
        let help = try ChildProcess(["--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.lines.contains { $0.text.contains("--buffer-time") })
    }
}

import Foundation
import TestSupport
import Testing

/// `queueplayerd` as a process: what a user sees.
@Suite(.serialized) struct DaemonProcessTests {
    /// One run of the whole of `Media/` on the real-time null output (about a minute):
    /// the background signals are exercised on the way.
    @Test func onceLogsEveryItemPrintsBackgroundTicksOnSignalAndExitsZero() throws {
        let daemon = try ChildProcess(["--media", TestMedia.directory.path, "--output", "null", "--once"])
        defer { daemon.terminate() }
        try #require(daemon.waitForLine(timeout: 10) { $0.hasPrefix("Now playing: ") } != nil, "stderr: \(daemon.standardError)")
        usleep(500_000)
        #expect(!daemon.lines.contains { $0.text.hasPrefix("Background:") }, "nothing is printed in the foreground")

        let backgroundAt = ChildProcess.now()
        daemon.send(SIGUSR1)
        usleep(2_000_000)
        let foregroundAt = ChildProcess.now()
        daemon.send(SIGUSR2)
        usleep(1_000_000)

        let ticks = daemon.lines.filter { $0.text.hasPrefix("Background: ") }
        let values = ticks.compactMap { Double($0.text.dropFirst("Background: ".count)) }
        #expect(values.count == ticks.count, "every line is `Background: <seconds with two decimals>`")
        #expect(ticks.allSatisfy { $0.text.split(separator: ".").last?.count == 2 })
        let first = try #require(ticks.first)
        let last = try #require(ticks.last)
        #expect(first.time - backgroundAt < 0.05, "the first tick came \(first.time - backgroundAt) s after SIGUSR1")
        #expect(last.time - foregroundAt < 0.05, "a tick came \(last.time - foregroundAt) s after SIGUSR2")
        // About 100 lines a second, each 0.01 after the previous (an item boundary restarts the count).
        let perSecond = Double(ticks.count) / (foregroundAt - backgroundAt)
        #expect(abs(perSecond - 100) <= 10, "\(perSecond) lines per second")
        let steps = zip(values, values.dropFirst()).map { (($1 - $0) * 100).rounded() / 100 }.filter { $0 > 0 }
        let regular = steps.filter { $0 == 0.01 }.count
        #expect(Double(regular) >= 0.95 * Double(steps.count), "steps: \(Set(steps))")

        let status = daemon.wait(timeout: 150)
        #expect(status == 0, "stderr: \(daemon.standardError)")
        let playing = daemon.lines.filter { $0.text.hasPrefix("Now playing: ") }.map(\.text)
        #expect(playing == TestMedia.all.map { "Now playing: \($0.lastPathComponent)" })
        #expect(daemon.lines.filter { $0.text.hasPrefix("Background: ") }.count == ticks.count, "no tick after SIGUSR2")
    }

    @Test func badArgumentsPrintUsageAndExitNonZero() throws {
        for arguments in [["--output", "speakers"], ["--media", "/nonexistent-directory"], ["--bogus"],
                          ["--media", TestMedia.directory.path, "extra.mp3"],
                          ["--background-modes", "fetch"], ["--background-time", "-1"], ["--background-time", "soon"]] {
            let daemon = try ChildProcess(arguments)
            let status = daemon.wait(timeout: 10)
            #expect(status != nil && status != 0, "\(arguments) exited \(String(describing: status))")
            #expect(daemon.standardError.contains("Usage: queueplayerd") || daemon.standardError.contains("Error:"),
                    "\(arguments): \(daemon.standardError)")
        }
        let help = try ChildProcess(["--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.lines.contains { $0.text.contains("--output") })
    }

    @Test func strictALSAOutputThatCannotOpenIsAnError() throws {
        let daemon = try ChildProcess(["--output", "alsa:no-such-device", "--once", TestMedia.all[0].path])
        #expect(daemon.wait(timeout: 10) == 64)
        #expect(daemon.standardError.contains("no-such-device"))
    }

    @Test func autoOutputFallsBackToTheNullOutputWithAWarning() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("asoundrc")
        // A default device that cannot open: a hw device of a card this machine does not have.
        try "pcm.!default { type hw card 99 }\n".write(to: config, atomically: true, encoding: .utf8)
        let tone = try TestMedia.makeTone(seconds: 0.5, in: directory, name: "short")
        let daemon = try ChildProcess(["--once", tone.path],
                                      environment: ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(config.path)"])
        #expect(daemon.wait(timeout: 10) == 0)
        #expect(daemon.standardError.contains("warning"))
        #expect(daemon.standardError.contains("null"))
        #expect(daemon.lines.map(\.text) == ["Now playing: short.mp3"])
    }
}

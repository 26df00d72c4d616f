import Foundation
import TestSupport
import Testing

/// `queueplayerd` as a process: what a user sees.
@Suite(.serialized) struct DaemonProcessTests {
    /// One run of the whole of `Media/` on the real-time null output (about a minute):
    /// the background signals are exercised on the way, five times over.
    ///
    /// Timing is judged from many lines, not one: each `Background:` line's value steps by
    /// 0.01 (95th percentile), lines come 100 a second by their own arrival times, the first
    /// line after SIGUSR1 comes promptly in the median of five entries, and none is printed
    /// for a playing time later than the position reported once the daemon is active again.
    @Test func onceLogsEveryItemPrintsBackgroundTicksOnSignalAndExitsZero() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--once"])
        try #require(daemon.process.waitForLine(timeout: 10) { $0.hasPrefix("Now playing: ") } != nil,
                     "stderr: \(daemon.process.standardError)")
        // Half a second of playing in the foreground prints nothing.
        let played = try daemon.waitForStatus(timeout: 5) { (Double($0["elapsed"] ?? "") ?? 0) >= 0.5 }
        #expect((Double(played["elapsed"] ?? "") ?? 0) >= 0.5)
        #expect(!daemon.process.lines.contains { $0.text.hasPrefix("Background:") }, "nothing is printed in the foreground")

        func backgroundLines() -> [ChildProcess.Line] { daemon.process.lines.filter { $0.text.hasPrefix("Background: ") } }
        func value(_ line: ChildProcess.Line) -> Double? { Double(line.text.dropFirst("Background: ".count)) }
        var firstLineDelays: [Double] = []
        // Per round: where its lines start, and the playing position reported once active again.
        var starts: [Int] = []
        var positions: [Double] = []
        for round in 0..<5 {
            let already = backgroundLines().count
            let wanted = round == 0 ? 300 : 20
            let backgroundAt = ChildProcess.now()
            daemon.process.send(SIGUSR1)
            let arrived = waitUntil(timeout: 10) { backgroundLines().count >= already + wanted }
            try #require(arrived, "\(wanted) Background lines within 10 s; stderr: \(daemon.process.standardError)")
            firstLineDelays.append(backgroundLines()[already].time - backgroundAt)
            daemon.process.send(SIGUSR2)
            let active = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }
            try #require(active["appstate"] == "active")
            starts.append(already)
            positions.append(try #require(Double(active["elapsed"] ?? "")))
        }
        // Played on in the foreground for a while: any late line has long been read.
        _ = try daemon.waitForStatus(timeout: 5) { (Double($0["elapsed"] ?? "") ?? 0) >= positions.last! + 0.5 || $0["song"] == nil }
        let everything = backgroundLines()
        let rounds = zip(starts, starts.dropFirst() + [everything.count]).map { Array(everything[$0..<$1]) }
        // The current item's lines are those after the last restart of the count; none may be for
        // a playing time after the position the daemon reported once active (one tick of slack).
        let lateLines = zip(rounds, positions).flatMap { round, position -> [String] in
            let values = round.compactMap(value)
            let restart = (values.indices.dropFirst().last { values[$0] < values[$0 - 1] }) ?? 0
            return values[restart...].filter { $0 > position + 0.011 }.map { "\($0) after \(position)" }
        }

        let all = rounds.joined()
        let values = all.compactMap(value)
        #expect(values.count == all.count, "every line is `Background: <seconds with two decimals>`")
        #expect(all.allSatisfy { $0.text.split(separator: ".").last?.count == 2 })
        // Each 0.01 after the previous, within a round (an item boundary restarts the count).
        let steps = rounds.flatMap { round in
            let values = round.compactMap(value)
            return zip(values, values.dropFirst()).map { (($1 - $0) * 100).rounded() / 100 }.filter { $0 > 0 }
        }
        let regular = steps.filter { $0 == 0.01 }.count
        #expect(Double(regular) >= 0.95 * Double(steps.count), "steps: \(Set(steps))")
        // About 100 lines a second, from the lines' own arrival times over the long first round.
        let long = rounds[0]
        let perSecond = Double(long.count - 1) / (long.last!.time - long.first!.time)
        #expect(abs(perSecond - 100) <= 10, "\(perSecond) lines per second")
        let median = firstLineDelays.sorted()[firstLineDelays.count / 2]
        #expect(median < 0.05, "first line after SIGUSR1, median of \(firstLineDelays): \(median) s")
        #expect(lateLines.isEmpty, "lines for playing times after the daemon was active again: \(lateLines.prefix(5))")

        let status = daemon.process.wait(timeout: 150)
        #expect(status == 0, "stderr: \(daemon.process.standardError)")
        let playing = daemon.process.lines.filter { $0.text.hasPrefix("Now playing: ") }.map(\.text)
        #expect(playing == TestMedia.all.map { "Now playing: \($0.lastPathComponent)" })
        #expect(backgroundLines().count == all.count, "no line after the last SIGUSR2")
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
        let version = try ChildProcess(["--version"])
        #expect(version.wait(timeout: 10) == 0)
        // The version, and the protocol version the control socket greets with (`OK MPD 0.23.5`).
        let printed = version.lines.map(\.text)
        #expect(printed.count == 1 && printed[0].wholeMatch(of: #/queueplayerd \d+\.\d+\.\d+ \(MPD protocol 0\.23\.5\)/#) != nil, "\(printed)")
    }

    /// A mistyped option followed by its value: the value looks like a FILE, and next to
    /// --media that is a conflict, but what the user needs to hear is the unknown option.
    @Test func aMistypedOptionWithAValueIsReportedAsUnknownNotAsAConflict() throws {
        let daemon = try ChildProcess(["--media", TestMedia.directory.path, "--prot", "6600"])
        #expect(daemon.wait(timeout: 10) == 64)
        #expect(daemon.standardError.hasPrefix("Error: Unknown option '--prot'"), "\(daemon.standardError)")
        // The conflict itself is still reported, as the same usage error.
        let conflict = try ChildProcess(["--media", TestMedia.directory.path, "extra.mp3"])
        #expect(conflict.wait(timeout: 10) == 64)
        #expect(conflict.standardError.hasPrefix("Error: Give one of --media DIR"), "\(conflict.standardError)")
        #expect(conflict.standardError.contains("Usage: queueplayerd"))
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
        #expect(daemon.standardError.contains("warning queueplayerd: output: ALSA's default device cannot be opened"))
        #expect(daemon.standardError.contains("null"))
        #expect(daemon.lines.map(\.text) == ["Now playing: short.mp3"])
    }
}

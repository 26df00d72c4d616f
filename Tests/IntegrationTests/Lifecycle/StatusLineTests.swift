import Foundation
import TestSupport
import Testing

/// The foreground status line on a real pseudo-terminal (`script` runs the daemon on one).
@Suite struct StatusLineTests {
    /// The status line's text: `Playing  name  0:01 / 0:02  [1/1]`.
    static func isStatus(_ text: String) -> Bool { text.wholeMatch(of: #/(Playing|Paused|Stopped)  .*\[\d+\/\d+\]/#) != nil }

    @Test func onATerminalOneStatusLineIsRedrawnInPlaceAtMostTenTimesASecond() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 2.5, in: directory, name: "tone")
        let command = "'\(ChildProcess.daemonPath)' --once --output null '\(tone.path)'"
        let started = ChildProcess.now()
        let terminal = try ChildProcess(program: "/usr/bin/script", ["-q", "-e", "-f", "-c", command, "/dev/null"],
                                        environment: ["XDG_RUNTIME_DIR": directory.path, "TERM": "xterm"])
        #expect(terminal.wait(timeout: 15) == 0, "stderr: \(terminal.standardError)")
        let duration = ChildProcess.now() - started
        let raw = (terminal.lines.map(\.text) + [terminal.unterminatedOutput]).joined(separator: "\n")

        // Every line the terminal shows, cut where the status line was cleared ("\r", erase line).
        // (The terminal ends lines with "\r\n", which is a single Character: replaced first.)
        let rows = raw.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n").map { row in
            row.components(separatedBy: "\r\u{1B}[2K")
        }
        // An update follows a clear; a status line at the very start of a row is the redraw that
        // puts it back under a line just written, and repeats the last update exactly.
        let drawn = rows.flatMap { $0.dropFirst() }.filter(Self.isStatus)
        #expect(drawn.count >= 3, "the status line was drawn \(drawn.count) times: \(raw.debugDescription)")
        #expect(Double(drawn.count) <= 10 * duration + 1, "\(drawn.count) redraws in \(duration) s")
        var lastDrawn: String?
        for row in rows {
            if let first = row.first, Self.isStatus(first) {
                #expect(first == lastDrawn, "a line was followed by \(first.debugDescription), not the status line shown")
            }
            lastDrawn = row.dropFirst().last(where: Self.isStatus) ?? lastDrawn
        }
        // In place: a status line is always cleared again, never left behind by a newline.
        for row in rows.dropLast() {
            #expect(!Self.isStatus(row.last ?? ""), "a status line was pushed up: \(row)")
        }
        // The last row ends cleared: a redraw at its start (after the last line written) must be
        // cleared too, and nothing is drawn after the clear.
        #expect(rows.last.map { $0.last == "" && $0.dropFirst().allSatisfy(\.isEmpty) } ?? false,
                "the status line is removed on exit: \(String(describing: rows.last))")
        let times = drawn.compactMap { $0.firstMatch(of: #/  (\d+:\d\d) \/ 0:02  \[1\/1\]/#).map { String($0.1) } }
        #expect(Array(times.prefix(3)) == ["0:00", "0:01", "0:02"], "\(drawn)")
        #expect(times == times.sorted(), "elapsed never runs backwards: \(times)")
        #expect(drawn.first?.hasPrefix("Playing  tone.mp3  ") ?? false)
        // The daemon's own lines stay whole lines.
        #expect(rows.contains { $0.last == "Now playing: tone.mp3" })
    }
}

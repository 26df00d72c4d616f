import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Paused or stopped, the daemon does not wake up: no thread of it polls, ticks or redraws
/// while a client idles on the control socket.
///
/// One wake-up a second is not ours and is allowed: libdispatch on Linux runs a timer on its
/// manager thread once a second for as long as the process lives (`_dispatch_workq_monitor_pools`,
/// which watches its worker pool), whatever the process does. So the property is: in a window
/// of several seconds, every thread but one stays asleep, and that one wakes at most once a
/// second. A timer of ours fires on that manager thread and runs its handler on a worker, so
/// it shows up as a second thread waking; a thread of ours that polls shows up as itself.
@Suite(.serialized) struct IdleWakeUpTests {
    /// `--output null` (the real-time null sink), stdout a pipe (no status line): paused, then
    /// stopped, with a client in `idle`.
    @Test func pausedOrStoppedWithAClientIdlingTheDaemonDoesNotWakeUp() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 60, in: directory, name: "minute")
        let daemon = try LifecycleDaemon(["--output", "null", "--no-state", tone.path])
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        let idler = try IdlingClient(socket: daemon.socket)

        try daemon.request("pause")
        try idler.waitForChange("player")
        try #require(try daemon.status()["state"] == "pause")
        let paused = try WakeUps.settledWindow(of: daemon.process.processIdentifier)
        #expect(paused.isAsleep, "paused: \(paused)")

        try daemon.request("stop")
        try idler.waitForChange("player")
        try #require(try daemon.status()["state"] == "stop")
        let stopped = try WakeUps.settledWindow(of: daemon.process.processIdentifier)
        #expect(stopped.isAsleep, "stopped: \(stopped)")
        print("paused: \(paused); stopped: \(stopped)")
    }

    /// On a terminal, where the status line is shown: paused, its redraw timer stops too.
    @Test func pausedOnATerminalTheStatusLineDoesNotWakeTheDaemon() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = try TestMedia.makeTone(seconds: 60, in: directory, name: "minute")
        let socket = directory.appendingPathComponent("control.sock").path
        // `exec`: the daemon is the terminal's child itself, not a shell's.
        let command = "exec '\(ChildProcess.daemonPath)' --no-state --output null --socket '\(socket)' '\(tone.path)'"
        let terminal = try ChildProcess(program: "/usr/bin/script", ["-q", "-e", "-f", "-c", command, "/dev/null"],
                                        environment: ["TERM": "xterm"])
        defer { terminal.terminate() }
        try #require(UnixSocketClient.waitUntilAccepting(socket, timeout: 10), "stderr: \(terminal.standardError)")
        let pid = try #require(WakeUps.onlyChild(of: terminal.processIdentifier))
        let client = try UnixSocketClient.connect(path: socket)
        defer { client.close() }
        _ = try client.readLine()
        #expect(waitUntil(timeout: 5) { terminal.unterminatedOutput.contains("Playing  minute.mp3") },
                "the status line is shown: \(terminal.unterminatedOutput.debugDescription)")
        let idler = try IdlingClient(socket: socket)

        #expect(try client.request("pause").last == "OK")
        try idler.waitForChange("player")
        #expect(waitUntil(timeout: 5) { terminal.unterminatedOutput.contains("Paused  minute.mp3") },
                "the status line says it is paused: \(terminal.unterminatedOutput.debugDescription)")
        let paused = try WakeUps.settledWindow(of: pid)
        #expect(paused.isAsleep, "paused on a terminal: \(paused)")

        // Still drawn after a change made while paused: a seek is shown without the timer.
        #expect(try client.request("seekcur 30").last == "OK")
        #expect(waitUntil(timeout: 5) { terminal.unterminatedOutput.contains("Paused  minute.mp3  0:30 / 1:00") },
                "the status line shows the seek: \(terminal.unterminatedOutput.debugDescription)")
        print("paused on a terminal: \(paused)")
    }
}

/// A raw control-socket client in `idle`, as an MPD client's idle connection is.
private final class IdlingClient {
    let client: UnixSocketClient

    init(socket: String) throws {
        client = try UnixSocketClient.connect(path: socket)
        _ = try client.readLine()
        try client.send("idle\n")
    }

    deinit { client.close() }

    /// Waits for the idle to report `subsystem` (among others), and idles again.
    func waitForChange(_ subsystem: String, timeout: Double = 5) throws {
        let reply = try client.readReply(timeout: timeout)
        guard reply.contains("changed: \(subsystem)") else { throw UnixSocketError("idle replied \(reply)") }
        try client.send("idle\n")
    }
}

/// The context switches of a process's threads over a window (`/proc/PID/task/*/status`).
struct WakeUps: CustomStringConvertible {
    let seconds: Double
    /// The threads that switched in the window, as `tid:name` and count (a thread started in
    /// the window counts all of its switches; one that ended in it is left out).
    let threads: [String: Int]

    /// The one thread allowed to wake (libdispatch's manager thread) and the rest.
    var busiest: Int { threads.values.max() ?? 0 }
    var others: Int { threads.values.reduce(0, +) - busiest }

    /// Every thread but one asleep, that one at most once a second (libdispatch's pool monitor).
    var isAsleep: Bool { others == 0 && Double(busiest) <= seconds.rounded(.up) + 1 }

    var description: String {
        "\(threads.values.reduce(0, +)) context switches in \(String(format: "%.1f", seconds)) s: \(threads)"
    }

    /// Measures `seconds` of process `pid`.
    static func window(of pid: pid_t, seconds: Double) -> WakeUps {
        let before = counts(pid)
        let start = ChildProcess.now()
        usleep(UInt32(seconds * 1e6))
        let after = counts(pid)
        let elapsed = ChildProcess.now() - start
        var threads: [String: Int] = [:]
        for (thread, count) in after where count - (before[thread] ?? 0) > 0 {
            threads[thread] = count - (before[thread] ?? 0)
        }
        return WakeUps(seconds: elapsed, threads: threads)
    }

    /// Waits (up to `settling` seconds) for the work that led here to die down (a worker
    /// thread finishing, an idle dispatch thread timing out: each happens once), shown by a
    /// 2-second window asleep, then measures the next `seconds`. A thread that wakes
    /// periodically wakes in every window, so it fails both the wait and the measure.
    static func settledWindow(of pid: pid_t, seconds: Double = 5, settling: Double = 20) throws -> WakeUps {
        let deadline = ChildProcess.now() + settling
        var last = window(of: pid, seconds: 2)
        while !last.isAsleep {
            guard ChildProcess.now() < deadline else { return last }
            last = window(of: pid, seconds: 2)
        }
        return window(of: pid, seconds: seconds)
    }

    /// Switches so far per thread of `pid`, as `tid:name`.
    static func counts(_ pid: pid_t) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var counts: [String: Int] = [:]
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            var name = ""
            var total = 0
            for line in status.split(separator: "\n") {
                if line.hasPrefix("Name:") { name = line.dropFirst("Name:".count).trimmingCharacters(in: .whitespaces) }
                if line.contains("ctxt_switches:") { total += Int(line.split(separator: "\t").last ?? "") ?? 0 }
            }
            counts["\(task):\(name)"] = total
        }
        return counts
    }

    /// The one child of `pid` (`/proc/PID/task/PID/children`), once it has one.
    static func onlyChild(of pid: pid_t, timeout: Double = 5) -> pid_t? {
        var child: pid_t?
        _ = waitUntil(timeout: timeout) {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            child = text.split(separator: " ").first.flatMap { pid_t($0) }
            return child != nil
        }
        return child
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// SIGUSR1 and SIGUSR2 taken in order even when both are pending at once: a burst that
/// ends in SIGUSR2 ends in the foreground.
@Suite(.serialized) struct SignalOrderTests {
    static let toBackground = LifecycleTests.toBackground
    static let toForeground = LifecycleTests.toForeground

    /// The daemon stopped (SIGSTOP), then USR1 and USR2 sent, then continued: both signals
    /// are pending together, the kernel hands over USR1 first, and USR2 must wait for USR1's
    /// handler rather than run on top of it. Every repetition goes to the background and back.
    @Test func aPendingPairIsTakenUSR1ThenUSR2EveryTime() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state"])
        var failures: [Int] = []
        let repetitions = 40
        for repetition in 0..<repetitions {
            let before = daemon.notifications.count
            daemon.process.send(SIGSTOP)
            try #require(Self.waitForProcessState(daemon.process.processIdentifier, "T"), "the daemon stopped")
            // Sent in this order, twice over: pending signals do not queue, so this is one USR1 and one USR2.
            for signal in [SIGUSR1, SIGUSR2, SIGUSR1, SIGUSR2] { daemon.process.send(signal) }
            daemon.process.send(SIGCONT)
            // Taken in order: four notifications, ending in the foreground. Out of order (USR2 first,
            // which changes nothing in the foreground, then USR1): two, ending in the background.
            let added = Self.notifications(of: daemon, since: before) { $0.count >= 4 }
            if added != Self.toBackground + Self.toForeground {
                failures.append(repetition)
                // Back to the foreground for the next repetition.
                daemon.process.send(SIGUSR2)
                _ = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(repetitions) pending USR1+USR2 pairs ended in the background")
        #expect(try daemon.status()["appstate"] == "active")
    }

    /// Bursts sent as fast as `kill` goes, each ending in USR2: whatever the kernel coalesces
    /// or leaves pending together, the daemon ends in the foreground, and its notifications
    /// alternate as iOS's do.
    @Test func burstsEndingInUSR2EndInTheForeground() throws {
        let daemon = try LifecycleDaemon(["--media", TestMedia.directory.path, "--output", "null", "--no-state"])
        var failures: [String] = []
        let repetitions = 60
        for repetition in 0..<repetitions {
            let before = daemon.notifications.count
            let pairs = 1 + repetition % 5
            for _ in 0..<pairs {
                daemon.process.send(SIGUSR1)
                daemon.process.send(SIGUSR2)
            }
            // Settled: nothing pending any more, and the foreground reached (or the wait ran out).
            try #require(Self.waitUntilNoSignalPending(daemon.process.processIdentifier), "the signals were delivered")
            let added = Self.notifications(of: daemon, since: before) { $0.count >= 4 && $0.suffix(2) == Self.toForeground[...] }
            let state = try daemon.status()["appstate"]
            let alternating = added.count % 4 == 0 && added == Array((0..<(added.count / 4)).map { _ in Self.toBackground + Self.toForeground }.joined())
            if state != "active" || !alternating {
                failures.append("burst \(repetition) (\(pairs) pairs): \(state ?? "?"), \(added)")
                daemon.process.send(SIGUSR2)
                _ = try daemon.waitForStatus(timeout: 2) { $0["appstate"] == "active" }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(repetitions) bursts: \(failures.prefix(5))")
    }

    /// The notifications logged after the first `before`, once `done` holds for them (or after 2 s).
    static func notifications(of daemon: LifecycleDaemon, since before: Int, until done: ([String]) -> Bool) -> [String] {
        var added: [String] = []
        _ = waitUntil(timeout: 2) {
            added = Array(daemon.notifications.dropFirst(before))
            return done(added)
        }
        return added
    }

    /// True once `/proc/PID/stat` shows the process in `state` (e.g. "T": stopped), within 2 s.
    static func waitForProcessState(_ pid: pid_t, _ state: String) -> Bool {
        let deadline = ChildProcess.now() + 2
        while ChildProcess.now() < deadline {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"),
               stat[stat.index(after: close)...].split(separator: " ").first.map(String.init) == state {
                return true
            }
            usleep(1_000)
        }
        return false
    }

    /// True once neither the process nor any of its threads has USR1 or USR2 pending, within 2 s.
    static func waitUntilNoSignalPending(_ pid: pid_t) -> Bool {
        let mask: UInt64 = (1 << UInt64(SIGUSR1 - 1)) | (1 << UInt64(SIGUSR2 - 1))
        let deadline = ChildProcess.now() + 2
        while ChildProcess.now() < deadline {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            let pending = tasks.contains { task in
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { return false }
                return status.split(separator: "\n").contains { line in
                    guard line.hasPrefix("SigPnd:") || line.hasPrefix("ShdPnd:") else { return false }
                    return (UInt64(line.split(separator: "\t").last ?? "", radix: 16) ?? 0) & mask != 0
                }
            }
            if !pending { return true }
            usleep(1_000)
        }
        return false
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `queueplayerd` as a process, on the real-time null output unless told otherwise, whose
/// control socket lives in a scratch directory of its own; ready (accepting connections) once
/// `init` returns. The one process wrapper of the tests that need the daemon's process: the
/// others (``LifecycleDaemon``, ``StreamDaemon``, ``WebDaemon``, ``CapturingDaemon``, the TCP
/// tests' daemon) start theirs through it and add what their subject needs.
final class ControlDaemon: ControlledDaemon {
    let directory: URL
    let socket: String
    let process: ChildProcess

    /// `arguments` are the daemon's media arguments (`--music-directory DIR`, `--media DIR`, files);
    /// `--output null` (or one `--output` per entry of `outputs`) and
    /// `--socket <scratch>/control.sock` (or `socket`) are added.
    /// With `fileLimit`, the daemon runs under `prlimit` with that many descriptors, soft and hard.
    /// `environment` is added to the daemon's. Ready within `readyTimeout` seconds, or an error.
    init(_ arguments: [String], socket: String? = nil, outputs: [String] = ["null"], directory: URL? = nil,
         fileLimit: Int? = nil, environment: [String: String] = [:], readyTimeout: Double = 5) throws {
        if let directory { self.directory = directory } else { self.directory = try TestMedia.scratchDirectory() }
        self.socket = socket ?? self.directory.appendingPathComponent("control.sock").path
        let daemonArguments = arguments + outputs.flatMap { ["--output", $0] } + ["--socket", self.socket]
        if let fileLimit {
            process = try ChildProcess(program: "/usr/bin/prlimit",
                                       ["--nofile=\(fileLimit):\(fileLimit)", "--", ChildProcess.daemonPath] + daemonArguments,
                                       environment: environment)
        } else {
            process = try ChildProcess(daemonArguments, environment: environment)
        }
        guard UnixSocketClient.waitUntilAccepting(self.socket, timeout: readyTimeout) else {
            let stderr = process.standardError
            process.terminate()
            try? FileManager.default.removeItem(at: self.directory)
            throw UnixSocketError("the daemon did not accept connections on \(self.socket) within \(readyTimeout) s; stderr: \(stderr)")
        }
    }

    var standardError: String { process.standardError }

    /// Terminates the daemon and removes its scratch directory.
    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs the real `/usr/bin/mpc` against this daemon (`MPD_HOST=<socket>`).
    func mpc(_ arguments: String..., timeout: Double = 10) throws -> ToolRun {
        try ToolRun.run("/usr/bin/mpc", arguments, environment: ["MPD_HOST": socket], timeout: timeout)
    }

    /// Starts `/usr/bin/mpc` and returns without waiting (for `mpc idle`).
    func startMPC(_ arguments: String...) throws -> ChildProcess {
        try ChildProcess(program: "/usr/bin/mpc", arguments, environment: ["MPD_HOST": socket])
    }
}

/// Checks an mpc run that mpd would answer with exactly `stdout`, nothing on stderr and status 0.
func expectSuccess(_ run: ToolRun, stdout: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stdout == stdout, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stderr == "", "\(run)", sourceLocation: sourceLocation)
}

/// mpc's second status line, `[playing] #1/4   0:05/0:18 (27%)`, taken apart.
struct MPCProgressLine: Equatable, CustomStringConvertible {
    var state: String       // "playing" or "paused"
    var position: Int       // 1-based
    var length: Int
    var elapsed: Int        // seconds
    var total: Int          // seconds
    var percent: Int

    /// Parses `line`, and only accepts it if it is exactly what mpc 0.34 prints for these numbers.
    init?(_ line: String) {
        guard let match = line.wholeMatch(of: #/\[(playing|paused)\] +#(\d+)/(\d+) +(\d+):(\d\d)/(\d+):(\d\d) \((\d+)%\)/#),
              let position = Int(match.2), let length = Int(match.3),
              let elapsedMinutes = Int(match.4), let elapsedSeconds = Int(match.5),
              let totalMinutes = Int(match.6), let totalSeconds = Int(match.7), let percent = Int(match.8)
        else { return nil }
        self.state = String(match.1)
        self.position = position
        self.length = length
        self.elapsed = elapsedMinutes * 60 + elapsedSeconds
        self.total = totalMinutes * 60 + totalSeconds
        self.percent = percent
        guard description == line else { return nil }
    }

    /// The line as mpc formats it: `[%s] #%d/%u %3u:%02u/%u:%02u (%u%%)`, `[paused]` padded to 9.
    var description: String {
        let label = state == "playing" ? "[playing]" : "[paused] "
        let minutes = String(repeating: " ", count: max(0, 3 - String(elapsed / 60).count)) + String(elapsed / 60)
        return "\(label) #\(position)/\(length) \(minutes):\(String(format: "%02d", elapsed % 60))/\(total / 60):\(String(format: "%02d", total % 60)) (\(percent)%)"
    }
}

/// Checks mpc's default 3-line output while playing or paused: the song line and the volume
/// line exactly, the progress line exactly except for the elapsed time (`elapsed` range; the
/// percentage must then be mpc's `100 * elapsed / total`). Returns the elapsed seconds shown.
@discardableResult
func expectPlayingStatus(_ run: ToolRun, song: String, state: String, position: Int, length: Int,
                         total: Int, elapsed: ClosedRange<Int>,
                         sourceLocation: SourceLocation = #_sourceLocation) -> Int? {
    #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stderr == "", "\(run)", sourceLocation: sourceLocation)
    guard run.stdout.count == 3 else {
        Issue.record("expected 3 lines: \(run)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(run.stdout[0] == song, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stdout[2] == ControlSocketExpectations.volumeLine, "\(run)", sourceLocation: sourceLocation)
    guard let progress = MPCProgressLine(run.stdout[1]) else {
        Issue.record("line 2 is not mpc's progress line: \(run.stdout[1].debugDescription) (\(run))", sourceLocation: sourceLocation)
        return nil
    }
    #expect(progress.state == state, "\(run)", sourceLocation: sourceLocation)
    #expect(progress.position == position && progress.length == length, "\(run)", sourceLocation: sourceLocation)
    #expect(progress.total == total, "\(run)", sourceLocation: sourceLocation)
    #expect(elapsed.contains(progress.elapsed), "elapsed \(progress.elapsed) s not in \(elapsed): \(run)", sourceLocation: sourceLocation)
    #expect(progress.percent == (progress.total > 0 ? 100 * progress.elapsed / progress.total : 0), "\(run)", sourceLocation: sourceLocation)
    return progress.elapsed
}

/// Whether process `pid` holds a connected Unix stream socket (its fds' socket inodes,
/// looked up in `/proc/net/unix`, state 03: connected).
func hasConnectedUnixSocket(_ pid: pid_t) -> Bool {
    let directory = "/proc/\(pid)/fd"
    let inodes = Set(((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { fd -> Substring? in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)"),
              target.hasPrefix("socket:[") else { return nil }
        return Substring(target.dropFirst("socket:[".count).dropLast())
    })
    // Read to the end: /proc reports a size of 0, and String(contentsOfFile:) then stops at
    // the first page, before the newest sockets (the mpc just started) on a busy machine.
    guard !inodes.isEmpty, let handle = FileHandle(forReadingAtPath: "/proc/net/unix"),
          let data = try? handle.readToEnd() else { return false }
    let table = String(decoding: data, as: UTF8.self)
    // Num RefCount Protocol Flags Type St Inode [Path]
    return table.split(separator: "\n").dropFirst().contains { line in
        let fields = line.split(separator: " ")
        return fields.count >= 7 && fields[5] == "03" && inodes.contains(fields[6])
    }
}

/// Starts `mpc idle` and waits until its connection to the daemon is established. The
/// daemon accepts connections in order, and a client's pending changes are recorded from
/// its connection on, so a command any later client sends is reported to this idle.
func startIdlingMPC(_ daemon: ControlDaemon, timeout: Double = 5) throws -> ChildProcess {
    let idle = try daemon.startMPC("idle")
    let deadline = ChildProcess.now() + timeout
    while !hasConnectedUnixSocket(idle.processIdentifier) {
        guard ChildProcess.now() < deadline, idle.isRunning else {
            throw UnixSocketError("mpc idle did not connect within \(timeout) s (running: \(idle.isRunning)): \(idle.lines.map(\.text)) \(idle.standardError)")
        }
        var none = pollfd()
        _ = poll(&none, 0, 5)
    }
    return idle
}

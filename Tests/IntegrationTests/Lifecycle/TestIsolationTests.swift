import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A daemon a test starts lives in directories of its own: it never sees the user's home,
/// saved state, runtime directory or settings.
@Suite(.serialized) struct TestIsolationTests {
    /// The environment of a running process, from /proc.
    static func environment(of pid: pid_t) throws -> [String: String] {
        // Read to the end: /proc reports a size of 0, which Data(contentsOf:) believes.
        let data = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/environ")).readToEnd() ?? Data()
        var result: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            result[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return result
    }

    /// Whether `pid` runs `command` and is asleep (state `S` in /proc): its exec is done.
    static func isSleepingIn(_ pid: pid_t, command: String) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
        let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
        return name == command && state == "S"
    }

    /// The user's home from the password database: what HOME is when nothing overrides it.
    static var passwordHome: String {
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return "/root" }
        return String(cString: directory)
    }

    /// A child gets its standard input, output and error, nothing else of the test process's:
    /// `swift test` passes the test runner connected sockets without close-on-exec, and a child
    /// holding one looked connected before it had connected anywhere (an `mpc idle` taken as
    /// listening missed the change it was started to see, 2 runs in 15 with a core loaded).
    @Test func aChildInheritsOnlyItsStandardDescriptors() throws {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let child = try ChildProcess(program: "/bin/sleep", ["30"])
        defer { child.terminate() }
        // posix_spawn returns once the child's exec has begun, before the kernel has closed its
        // close-on-exec descriptors: look once `sleep` itself sleeps.
        #expect(waitUntil(timeout: 10) { Self.isSleepingIn(child.processIdentifier, command: "sleep") })
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.processIdentifier)/fd")
        #expect(Set(descriptors) == ["0", "1", "2"])
    }

    @Test func aDaemonGetsItsOwnHomeAndXDGDirectories() throws {
        let daemon = try ChildProcess(["--music-directory", TestMedia.directory.path, "--output", "null"])
        defer { daemon.terminate() }
        // The new program's environment shows in /proc once its exec is through (posix_spawn
        // may return before that).
        _ = waitUntil(timeout: 10) { !((try? Self.environment(of: daemon.processIdentifier)) ?? [:]).isEmpty }
        let environment = try Self.environment(of: daemon.processIdentifier)
        let ours = ProcessInfo.processInfo.environment
        let home = Self.passwordHome
        let real = Set([home, home + "/.local/state", home + "/.config", "/run/user/\(getuid())"])
            .union(ChildProcess.userDirectoryVariables.compactMap { ours[$0] })
        var seen: Set<String> = []
        for variable in ChildProcess.userDirectoryVariables {
            let value = try #require(environment[variable], "\(variable) is set for the daemon")
            #expect(!real.contains(value), "\(variable)=\(value) is one of the user's or the test's own")
            #expect(!value.hasPrefix(home + "/"), "\(variable)=\(value) is under the user's home")
            #expect(FileManager.default.fileExists(atPath: value), "\(variable)=\(value) exists")
            seen.insert(value)
        }
        #expect(seen.count == ChildProcess.userDirectoryVariables.count, "four directories, not one shared")
    }

    /// A state planted where the test process's own environment says the user's state is:
    /// a daemon the test starts does not restore it.
    @Test func aStateInTheInvokingUsersStateHomeIsNotRestored() throws {
        // The test's own environment stands for the user's: a planted state in a scratch copy of
        // it, so the real one is never written.
        let planted = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: planted) }
        let stateDirectory = planted.appendingPathComponent("state/queueplayerd")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        let home = planted.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".local/state/queueplayerd"), withIntermediateDirectories: true)
        let state = #"{"version": 1, "queue": ["\#(TestMedia.all[2].path)"], "current": 0, "position": 1.5, "paused": true}"#
        for directory in [stateDirectory, home.appendingPathComponent(".local/state/queueplayerd")] {
            try state.write(to: directory.appendingPathComponent("state.json"), atomically: true, encoding: .utf8)
        }
        let saved = ChildProcess.userDirectoryVariables.map { ($0, getenv($0).map { String(cString: $0) }) }
        setenv("HOME", home.path, 1)
        setenv("XDG_STATE_HOME", planted.appendingPathComponent("state").path, 1)
        defer {
            for (variable, value) in saved {
                if let value { setenv(variable, value, 1) } else { unsetenv(variable) }
            }
        }
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        // Started as any program is (as `script` or `systemd-socket-activate` start it in other tests).
        let daemon = try ChildProcess(program: ChildProcess.daemonPath,
                                      ["--music-directory", TestMedia.directory.path, "--output", "null", "--socket", socket])
        defer { daemon.terminate() }
        try #require(UnixSocketClient.waitUntilAccepting(socket, timeout: 10), "stderr: \(daemon.standardError)")
        let client = try UnixSocketClient(path: socket)
        defer { client.close() }
        _ = try client.readLine()
        let status = try client.request("status")
        #expect(status.contains("playlistlength: 0"), "the planted queue was restored: \(status)")
        #expect(!daemon.standardError.contains("restored"), "\(daemon.standardError)")
    }
}

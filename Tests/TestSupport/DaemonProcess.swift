import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A `queueplayerd` (or any program) run as a child process, its output lines
/// collected with the monotonic time each arrived.
///
/// Spawned and reaped with `posix_spawn`/`waitpid` directly: the tests start
/// and signal many short-lived processes, and own every step of it.
public final class ChildProcess: Sendable {
    /// One line of output and when it was read (seconds, monotonic).
    public struct Line: Sendable {
        public let text: String
        public let time: Double
        public init(text: String, time: Double) {
            self.text = text
            self.time = time
        }
    }

    public let processIdentifier: pid_t
    /// The child's own home and XDG directories, if it inherited the test's environment.
    private let scratchDirectory: URL?
    private let output = OutputCollector()
    private let exitStatus = Mutex<Int32?>(nil)
    private let readersDone = DispatchGroup()

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on): every descriptor from
    /// `fd` up is closed in the child. Looked up at run time because Swift's Glibc module does
    /// not export it; spawning fails loudly (`ChildProcessError`) rather than leak if it is missing.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return { _, _ in ENOSYS }
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    /// The freshly built daemon: `QUEUEPLAYERD` if set, else next to the test bundle.
    public static var daemonPath: String {
        if let path = ProcessInfo.processInfo.environment["QUEUEPLAYERD"] { return path }
        let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [buildDirectory, buildDirectory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("queueplayerd").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return TestMedia.repository.appendingPathComponent(".build/debug/queueplayerd").path
    }

    /// The variables that locate a user's own files: a child never inherits them.
    public static let userDirectoryVariables = ["HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"]

    /// Starts the daemon with `arguments`; `environment` entries are added to the test's own.
    /// Its home, state, runtime and configuration directories are fresh (see ``init(program:_:environment:inheritEnvironment:captureOutput:)``).
    public convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(program: ChildProcess.daemonPath, arguments, environment: environment)
    }

    /// Starts the program at `path` with `arguments`; `environment` entries are added to
    /// the test's own (or replace it entirely when `inheritEnvironment` is false).
    ///
    /// An inheriting child gets `HOME`, `XDG_STATE_HOME`, `XDG_RUNTIME_DIR` and `XDG_CONFIG_HOME`
    /// in a fresh scratch directory, removed when the child is gone, unless `environment` names
    /// them: nothing a test starts (a daemon, or a daemon behind `script` or
    /// `systemd-socket-activate`) reads or writes the user's own saved state, socket or settings,
    /// and no two children meet in them. Its `DBUS_SYSTEM_BUS_ADDRESS` names no bus unless given.
    public init(program path: String, _ arguments: [String], environment: [String: String] = [:],
                inheritEnvironment: Bool = true, captureOutput: Bool = true) throws {
        var environment = environment
        if inheritEnvironment {
            let scratch = try TestMedia.scratchDirectory()
            for (variable, name) in zip(Self.userDirectoryVariables, ["home", "state", "runtime", "config"])
            where environment[variable] == nil {
                let directory = scratch.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
                environment[variable] = directory.path
            }
            // Nor the machine's D-Bus system bus: a daemon would publish itself through the
            // machine's Avahi (Zeroconf). A test that wants a bus gives its own (AvahiServer).
            if environment["DBUS_SYSTEM_BUS_ADDRESS"] == nil {
                environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(scratch.path)/no-system-bus"
            }
            scratchDirectory = scratch
        } else {
            scratchDirectory = nil
        }
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
            throw ChildProcessError("pipe: \(String(cString: strerror(errno)))")
        }
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Nothing else of the test process's: `swift test` hands the test runner connected
        // sockets that are not close-on-exec, and a child holding them looks connected (to
        // `hasConnectedUnixSocket`) before it has connected anywhere, and keeps the runner's
        // channel open after the test process is gone.
        guard Self.addCloseFrom(&actions, 3) == 0 else {
            throw ChildProcessError("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later needed)")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Signals the test process ignores or blocks must not leak into the child.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let base = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        let env = base.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = [path] + arguments
        var pid: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withCStrings(env) { envPointers in
                posix_spawn(&pid, path, &actions, &attributes, argvPointers, envPointers)
            }
        }
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw ChildProcessError("cannot start \(path): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
        startReader(outPipe[0]) { [output] data, time in output.appendStandardOutput(data, at: time) }
        startReader(errPipe[0]) { [output] data, _ in output.appendStandardError(data) }
    }

    /// Monotonic seconds.
    public static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    public var lines: [Line] { output.lines }
    /// Standard output after its last newline (a prompt, a status line).
    public var unterminatedOutput: String { output.unterminated }
    public var standardError: String { output.standardError }
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) { kill(processIdentifier, signal) }

    /// Waits up to `timeout` seconds for the process to exit; returns its exit status
    /// (128 + N for a signal), or nil if it still runs.
    @discardableResult
    public func wait(timeout: Double) -> Int32? {
        let deadline = Self.now() + timeout
        while Self.now() < deadline {
            if let status = reap(blocking: false) {
                _ = readersDone.wait(timeout: .now() + 2)
                return status
            }
            usleep(5_000)
        }
        return nil
    }

    /// Waits until a line satisfies `predicate`, up to `timeout` seconds.
    @discardableResult
    public func waitForLine(timeout: Double, where predicate: (String) -> Bool) -> Line? {
        let deadline = Self.now() + timeout
        while Self.now() < deadline {
            if let line = lines.first(where: { predicate($0.text) }) { return line }
            usleep(5_000)
        }
        return nil
    }

    /// Stops the process if it still runs (SIGTERM, then SIGKILL).
    public func terminate() {
        guard isRunning else { return }
        send(SIGTERM)
        if wait(timeout: 3) == nil {
            send(SIGKILL)
            wait(timeout: 3)
        }
    }

    deinit {
        terminate()
        if let scratchDirectory { try? FileManager.default.removeItem(at: scratchDirectory) }
    }

    // MARK: - Private

    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG)
            guard result == processIdentifier else { return nil }
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            return status
        }
    }

    private func startReader(_ fd: Int32, _ sink: @escaping @Sendable (Data, Double) -> Void) {
        readersDone.enter()
        let group = readersDone
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                sink(Data(buffer[0..<count]), ChildProcess.now())
            }
            close(fd)
            group.leave()
        }
        thread.start()
    }
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers = strings.map { strdup($0) }
    pointers.append(nil)
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// The output of a child process, appended from reader threads.
private final class OutputCollector: Sendable {
    private let stdout = Mutex<(lines: [ChildProcess.Line], partial: String)>(([], ""))
    private let stderr = Mutex<String>("")

    func appendStandardOutput(_ data: Data, at time: Double) {
        stdout.withLock { state in
            state.partial += String(decoding: data, as: UTF8.self)
            // By bytes: "\r\n" (a terminal's line end) is one Character, so a Character search misses it.
            while let newline = state.partial.utf8.firstIndex(of: UInt8(ascii: "\n")) {
                state.lines.append(ChildProcess.Line(text: String(state.partial[..<newline]), time: time))
                state.partial = String(state.partial[state.partial.utf8.index(after: newline)...])
            }
        }
    }

    func appendStandardError(_ data: Data) {
        stderr.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }

    var lines: [ChildProcess.Line] { stdout.withLock { $0.lines } }
    /// What followed the last newline.
    var unterminated: String { stdout.withLock { $0.partial } }
    var standardError: String { stderr.withLock { $0 } }
}

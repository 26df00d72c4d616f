import Foundation
import Synchronization

/// A `queueplayerd` (or any program) run as a child process, its output lines
/// collected with the monotonic time each arrived.
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

    private let process: Process
    private let output = OutputCollector()

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

    /// Starts the daemon with `arguments`; `environment` entries are added to the test's own.
    public convenience init(_ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(program: ChildProcess.daemonPath, arguments, environment: environment)
    }

    /// Starts the program at `path` with `arguments`; `environment` entries are added to the test's own.
    public init(program path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = TestMedia.repository
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.appendStandardOutput(data, at: ChildProcess.now())
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        err.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.appendStandardError(data)
            if data.isEmpty { handle.readabilityHandler = nil }
        }
        try process.run()
    }

    /// Monotonic seconds.
    public static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    public var lines: [Line] { output.lines }
    public var standardError: String { output.standardError }
    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits up to `timeout` seconds for the process to exit; returns its status, or nil if it still runs.
    @discardableResult
    public func wait(timeout: Double) -> Int32? {
        let deadline = Self.now() + timeout
        while process.isRunning && Self.now() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        usleep(50_000)  // let the pipes drain
        return process.terminationStatus
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

    /// Stops the process if it still runs.
    public func terminate() {
        if process.isRunning {
            process.terminate()
            if wait(timeout: 3) == nil { kill(process.processIdentifier, SIGKILL) }
        }
    }

    deinit { terminate() }
}

/// The output of a child process, appended from pipe handlers.
private final class OutputCollector: Sendable {
    private let stdout = Mutex<(lines: [ChildProcess.Line], partial: String)>(([], ""))
    private let stderr = Mutex<String>("")

    func appendStandardOutput(_ data: Data, at time: Double) {
        stdout.withLock { state in
            state.partial += String(decoding: data, as: UTF8.self)
            while let newline = state.partial.firstIndex(of: "\n") {
                state.lines.append(ChildProcess.Line(text: String(state.partial[..<newline]), time: time))
                state.partial.removeSubrange(...newline)
            }
        }
    }

    func appendStandardError(_ data: Data) {
        stderr.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }

    var lines: [ChildProcess.Line] { stdout.withLock { $0.lines } }
    var standardError: String { stderr.withLock { $0 } }
}

@testable import DaemonCore
@testable import DaemonAssembly
import Dispatch
import Foundation
import Logging
import Synchronization
import TestSupport
import Testing

/// A complete daemon inside the test process: the `Daemon` that `DaemonOptions` describe, built
/// by the same code as the executable's (``Daemon/make(options:environment:logger:adjust:)``)
/// and run as its service group, on the null output, with a scratch home, state, runtime and
/// configuration directory, its control socket in a scratch directory; ready (accepting
/// connections) once `init` returns. Clients speak the MPD protocol over that Unix socket.
///
/// What a process would show is kept here: the log lines, formatted as the daemon formats them
/// on stderr (``standardError``), and its own output lines (``lines``: "Now playing: ..."). The
/// process's signals stay the test process's: a test of signals, of systemd, of a real audio
/// device or of a real client's program runs the daemon as a process (IntegrationTests).
///
/// The daemon's tasks run on an executor of their own: a test blocks its thread waiting for a
/// reply, and must not hold up the daemon answering it. One runs at a time in a test process
/// (a second waits in `init` until the first has stopped): what the daemon observes in
/// `NotificationCenter.default` (an item that failed to play) is any player's in the process.
final class InProcessDaemon: ControlledDaemon, Sendable {
    /// The scratch directory: the control socket, and `home`, `state`, `runtime`, `config`.
    let directory: URL
    let socket: String
    /// The environment the daemon was given (its default places).
    let environment: [String: String]
    private let daemon: Daemon
    private let output = Recorder<ChildProcess.Line>()
    private let log = Recorder<String>()
    /// What the daemon's `run()` did, once it has returned: returned, or threw.
    private let ended = Recorder<Result<Void, any Error>>()
    private let endedSignal = DispatchSemaphore(value: 0)
    private let ownsDirectory: Bool
    /// Whether this daemon still holds ``running`` (given back once, at its end).
    private let holdsTurn = Atomic<Bool>(true)
    /// The turn of the one in-process daemon running.
    private static let running = DispatchSemaphore(value: 1)

    /// Builds and starts the daemon that `configure` describes, on top of: `--output null`,
    /// the control socket `<scratch>/control.sock` (or `socket`) as the only listener (`--bind`),
    /// no Zeroconf. `environment` is added to the scratch directories' variables.
    init(socket: String? = nil, directory: URL? = nil, environment: [String: String] = [:],
         _ configure: (inout DaemonOptions) throws -> Void = { _ in }) throws {
        guard Self.running.wait(timeout: .now() + 600) == .success else {
            throw UnixSocketError("another in-process daemon ran for 10 minutes without stopping")
        }
        var turn: DispatchSemaphore? = Self.running
        defer { turn?.signal() }
        ownsDirectory = directory == nil
        self.directory = try directory ?? TestMedia.scratchDirectory()
        self.socket = socket ?? self.directory.appendingPathComponent("control.sock").path
        var environment = environment
        for (variable, name) in zip(ChildProcess.userDirectoryVariables, ["home", "state", "runtime", "config"])
        where environment[variable] == nil {
            let place = self.directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            environment[variable] = place.path
        }
        self.environment = environment
        var options = DaemonOptions()
        options.outputs = [.null]
        options.socket = self.socket
        options.binds = [.unix(self.socket)]
        options.zeroconf = false
        try configure(&options)

        let makeHandler = StandardErrorLogHandler.factory(environment: environment)
        let logger = Logger(label: "queueplayerd") { [log] label in
            var handler = makeHandler(label)
            handler.write = { text in log.append(text) }
            return handler
        }
        daemon = try Daemon.make(options: options, environment: environment, logger: logger) { [output] configuration in
            configuration.handlesSignals = false
            configuration.printLine = { text in output.append(ChildProcess.Line(text: text, time: ChildProcess.now())) }
        }
        turn = nil
        let (daemon, ended, endedSignal) = (daemon, ended, endedSignal)
        Task(executorPreference: DaemonExecutor()) {
            let result: Result<Void, any Error>
            do {
                try await daemon.run()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            ended.append(result)
            endedSignal.signal()
        }
        let socketPath = self.socket
        // Ready once it accepts; or ended cleanly already (`once` with a short queue).
        guard waitUntil(timeout: 10, { !isRunning || UnixSocketClient.waitUntilAccepting(socketPath, timeout: 0.05) }),
              isRunning || endedCleanly else {
            stop()
            throw UnixSocketError("the daemon did not accept connections on \(socketPath) within 10 s (ended: \(String(describing: ended.all.first))); log: \(standardError)")
        }
    }

    /// The log so far, as the daemon's process would have written it to stderr.
    var standardError: String { log.all.joined() }
    /// The daemon's own output lines so far (what the process writes to stdout).
    var lines: [ChildProcess.Line] { output.all }
    /// True until the daemon's `run()` has returned.
    var isRunning: Bool { ended.all.isEmpty }
    /// True once the daemon's `run()` has returned without an error (the process's status 0).
    private var endedCleanly: Bool {
        if case .success = ended.all.first { true } else { false }
    }

    /// Waits up to `timeout` seconds for an output line that satisfies `predicate`.
    func waitForLine(timeout: Double, _ predicate: (String) -> Bool) -> ChildProcess.Line? {
        var found: ChildProcess.Line?
        _ = waitUntil(timeout: timeout) {
            found = lines.first { predicate($0.text) }
            return found != nil
        }
        return found
    }

    /// Stops the daemon as SIGTERM would, waits for it (up to `timeout` seconds) and removes the
    /// scratch directory it made. True if the daemon stopped cleanly (the process's status 0);
    /// false if it threw, nil if it had not stopped within `timeout`.
    @discardableResult
    func stop(timeout: Double = 15) -> Bool? {
        daemon.stop()
        let stopped = waitForEnd(timeout: timeout)
        if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
        if stopped != nil { giveTurn() }
        return stopped
    }

    deinit {
        if isRunning { _ = stop() }
        giveTurn()
    }

    /// Lets the next in-process daemon start (once).
    private func giveTurn() {
        if holdsTurn.exchange(false, ordering: .acquiringAndReleasing) { Self.running.signal() }
    }

    /// Waits up to `timeout` seconds for the daemon to end by itself (a client's `kill`, the end
    /// of the queue with `once`); as ``stop(timeout:)``'s result.
    func waitForEnd(timeout: Double) -> Bool? {
        if isRunning, endedSignal.wait(timeout: .now() + timeout) == .timedOut { return nil }
        endedSignal.signal()
        return endedCleanly
    }

}

/// Runs the in-process daemon's tasks on a dispatch queue of their own rather than on Swift's
/// cooperative threads (as many as the cores), which the tests' blocking reads may all hold.
final class DaemonExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "in-process daemon", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

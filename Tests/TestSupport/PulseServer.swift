import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A private, user-mode PulseAudio server with one null sink, reachable through
/// an ALSA configuration that defines the PCM `pulsenull` (the pulse plugin).
///
/// It paces playback in real time on a machine without a sound card. The
/// server lives in its own scratch directory and is killed on ``stop()``; ``kill()`` and
/// ``restart()`` make it crash and come back, as a user's sound server does.
public final class PulseServer: @unchecked Sendable {
    public let directory: URL
    /// An ALSA configuration search path (`ALSA_CONFIG_PATH`) that adds `pcm.pulsenull`, and
    /// `pcm.pulsenull_xrun`, the same device reporting every starvation the server sees as an
    /// underrun (the pulse plugin's `handle_underrun`).
    public let alsaConfigPath: String
    /// The server's address, for `pactl -s`.
    public let serverAddress: String
    private let socketPath: String
    private let process = Mutex<ChildProcess?>(nil)

    public init() throws {
        directory = try TestMedia.scratchDirectory()
        socketPath = directory.appendingPathComponent("pulse.sock").path
        serverAddress = "unix:\(socketPath)"
        let config = directory.appendingPathComponent("asoundrc")
        try """
            pcm.pulsenull {
                type pulse
                server "unix:\(socketPath)"
                device "qpnull"
            }
            pcm.pulsenull_xrun {
                type pulse
                server "unix:\(socketPath)"
                device "qpnull"
                handle_underrun true
            }
            """.write(to: config, atomically: true, encoding: .utf8)
        alsaConfigPath = "/usr/share/alsa/alsa.conf:\(config.path)"
        do {
            try start()
        } catch {
            stop()
            throw error
        }
    }

    /// The server's process id (of the current run).
    public var processIdentifier: pid_t? { process.withLock { $0?.processIdentifier } }

    /// Kills the server with SIGKILL, as a crash would: clients see their connection drop
    /// without a goodbye, and the socket file stays behind.
    public func kill() {
        process.withLock { process in
            guard let running = process else { return }
            running.send(SIGKILL)
            running.wait(timeout: 10)
            process = nil
        }
    }

    /// Starts the server again on the same socket (after ``kill()``), returning once it
    /// accepts connections.
    public func restart() throws {
        kill()
        try start()
    }

    private func start() throws {
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        // A killed server leaves its socket file: the new one must not be taken for ready by it.
        unlink(socketPath)
        // `norewinds=1`: the null sink renders at most 50 ms ahead of its clock. By default, with
        // no stream asking for a latency, it renders silence up to 2 s ahead, and a new stream
        // can take back only 167 ms of that per rewind; a new stream then waited, unplayed, for
        // as much as the rewinds its first writes caused left over (0.55 s after 8 rewinds,
        // about 1 s in a CI run; none after 11). That is the idle null sink's quirk, not
        // a device's clock, and it made the pacing test fail now and then (in a CI run, and
        // once in six runs here after the quick-next test).
        let started = try ChildProcess(
            program: "/usr/bin/pulseaudio",
            ["--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--disable-shm",
             "--load=module-null-sink sink_name=qpnull norewinds=1",
             "--load=module-native-protocol-unix socket=\(socketPath) auth-anonymous=1"],
            environment: ["HOME": directory.path, "PULSE_RUNTIME_PATH": runtime.path, "PATH": "/usr/bin:/bin"],
            inheritEnvironment: false, captureOutput: false)
        process.withLock { $0 = started }
        // Generous: at nice 19 on a loaded two-core machine, the server has been seen to take more than 10 s to listen.
        guard UnixSocketClient.waitUntilAccepting(socketPath, timeout: 30) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "pulseaudio does not listen on \(socketPath)"])
        }
    }

    /// How many playback streams the server has: one per open ALSA `pulsenull` device.
    public func playbackStreamCount() throws -> Int {
        try pactl("list", "short", "sink-inputs").filter { !$0.isEmpty }.count
    }

    /// Each playback stream's buffer latency, in seconds: the audio the server holds for it,
    /// not yet given to the sink (`pactl list sink-inputs`). An ALSA client's stream holds at
    /// most its device buffer.
    public func bufferLatencies() throws -> [Double] {
        // "\tBuffer Latency: 365283 usec"
        try pactl("list", "sink-inputs").compactMap { line -> Double? in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("Buffer Latency:") else { return nil }
            let fields = text.split(separator: " ")
            guard fields.count >= 3, let microseconds = Double(fields[2]) else { return nil }
            return microseconds / 1_000_000
        }
    }

    /// Suspends the null sink (its clock stops: the streams on it stop playing, and the
    /// server still answers them), or lets it run again: a device that stalls.
    public func suspendSink(_ suspended: Bool) throws {
        _ = try pactl("suspend-sink", "qpnull", suspended ? "1" : "0")
    }

    /// The lines `pactl` prints for `arguments`, asked of this server.
    private func pactl(_ arguments: String...) throws -> [String] {
        let command = try ChildProcess(program: "/usr/bin/pactl", ["-s", serverAddress] + arguments,
                                       environment: ["HOME": directory.path])
        guard command.wait(timeout: 10) == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "pactl failed: \(command.standardError)"])
        }
        return command.lines.map(\.text)
    }

    public func stop() {
        process.withLock { $0?.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

import Foundation

/// A private, user-mode PulseAudio server with one null sink, reachable through
/// an ALSA configuration that defines the PCM `pulsenull` (the pulse plugin).
///
/// It paces playback in real time on a machine without a sound card. The
/// server lives in its own scratch directory and is killed on ``stop()``.
public final class PulseServer: @unchecked Sendable {
    public let directory: URL
    /// An ALSA configuration search path (`ALSA_CONFIG_PATH`) that adds `pcm.pulsenull`.
    public let alsaConfigPath: String
    /// The server's address, for `pactl -s`.
    public let serverAddress: String
    private let process: ChildProcess

    public init() throws {
        directory = try TestMedia.scratchDirectory()
        let socket = directory.appendingPathComponent("pulse.sock").path
        serverAddress = "unix:\(socket)"
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        process = try ChildProcess(
            program: "/usr/bin/pulseaudio",
            ["--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--disable-shm",
             "--load=module-null-sink sink_name=qpnull",
             "--load=module-native-protocol-unix socket=\(socket) auth-anonymous=1"],
            environment: ["HOME": directory.path, "PULSE_RUNTIME_PATH": runtime.path, "PATH": "/usr/bin:/bin"],
            inheritEnvironment: false, captureOutput: false)
        let config = directory.appendingPathComponent("asoundrc")
        try """
            pcm.pulsenull {
                type pulse
                server "unix:\(socket)"
                device "qpnull"
            }
            """.write(to: config, atomically: true, encoding: .utf8)
        alsaConfigPath = "/usr/share/alsa/alsa.conf:\(config.path)"
        let deadline = ChildProcess.now() + 10
        while !FileManager.default.fileExists(atPath: socket) && ChildProcess.now() < deadline { usleep(20_000) }
        guard FileManager.default.fileExists(atPath: socket) else {
            stop()
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "pulseaudio did not create \(socket)"])
        }
    }

    /// How many playback streams the server has: one per open ALSA `pulsenull` device.
    public func playbackStreamCount() throws -> Int {
        let lister = try ChildProcess(program: "/usr/bin/pactl", ["-s", serverAddress, "list", "short", "sink-inputs"],
                                      environment: ["HOME": directory.path])
        guard lister.wait(timeout: 10) == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "pactl failed: \(lister.standardError)"])
        }
        return lister.lines.filter { !$0.text.isEmpty }.count
    }

    public func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

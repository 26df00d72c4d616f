import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A scratch music directory with `song.mp3` (the first sample) and 2000 hard links to it
/// under `copies/`: enough files that an `update` reading their tags outlasts a signal's or a
/// command's round trip many times over. Remove `library` when done.
func makeLargeLibrary() throws -> (library: URL, song: URL) {
    let library = try TestMedia.scratchDirectory()
    let song = library.appendingPathComponent("song.mp3")
    try FileManager.default.copyItem(at: TestMedia.all[0], to: song)
    let copies = library.appendingPathComponent("copies")
    try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
    for index in 0..<2_000 {
        try FileManager.default.linkItem(at: song, to: copies.appendingPathComponent(String(format: "copy-%04d.mp3", index)))
    }
    return (library, song)
}

/// A `queueplayerd` started with any arguments, its control socket in a scratch
/// directory, its state under a given (or scratch) `XDG_STATE_HOME`, logging at debug level.
final class LifecycleDaemon: ControlledDaemon {
    let control: ControlDaemon
    var socket: String { control.socket }
    var process: ChildProcess { control.process }
    var standardError: String { process.standardError }

    /// `arguments` as they are (no `--output` added), and `--socket`.
    init(_ arguments: [String], stateHome: URL? = nil, environment: [String: String] = [:]) throws {
        var environment = environment
        environment["QUEUEPLAYERD_LOG_LEVEL"] = "debug"
        if let stateHome { environment["XDG_STATE_HOME"] = stateHome.path }
        control = try ControlDaemon(arguments, outputs: [], environment: environment, readyTimeout: 10)
    }

    deinit {
        control.stop()
    }

    /// Waits until the notifications logged end with `suffix`; returns them all.
    func notifications(endingWith suffix: [String], timeout: Double = 2) -> [String] {
        waitForStandardError(timeout: timeout) { _ in notifications.suffix(suffix.count) == suffix[...] }
        return notifications
    }

    /// The debug log's life-cycle notifications, in order, as `name(state)`.
    var notifications: [String] {
        process.standardError.split(separator: "\n").compactMap { line in
            guard let match = line.firstMatch(of: #/notification Application(\w+) \(state (\w+)\)/#) else { return nil }
            return "\(match.1)(\(match.2))"
        }
    }
}

/// A private PulseAudio server and a daemon playing a one-minute tone into it through ALSA's
/// pulse plugin (`device`: `pulsenull`, or `pulsenull_xrun`), as the device-fault tests need.
struct PulsePlayingDaemon {
    let pulse: PulseServer
    let daemon: LifecycleDaemon
    private let directory: URL

    init(device: String) throws {
        pulse = try PulseServer()
        directory = try TestMedia.scratchDirectory()
        let tone = try TestMedia.makeTone(seconds: 60, in: directory, name: "minute")
        daemon = try LifecycleDaemon(["--output", "alsa:\(device)", "--no-state", tone.path],
                                     environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
    }

    /// Stops the server and removes the tone; the daemon ends when it is released.
    func stop() {
        pulse.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

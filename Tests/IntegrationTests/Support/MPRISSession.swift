import Foundation
import TestSupport
import Testing

/// mpDris2 on a private D-Bus session bus (`dbus-run-session`) serving one daemon, and
/// `playerctl` run on that bus as a user runs it (`playerctl -p mpd status`, ...).
///
/// Nothing comes from, or reaches, the user's own desktop session: the bus has no service
/// directories (so nothing is started by activation, such as the packaged mpDris2 for
/// `org.mpris.MediaPlayer2.mpd` with its default `localhost:6600`), mpDris2 reads only the
/// configuration written here (no notifications, no media keys), and every child has scratch
/// HOME and XDG directories (``ChildProcess``).
final class MPRISSession {
    static let script = TestMedia.integrationTests
        .appendingPathComponent("Scripts/mpris_session.sh")

    /// dbus-run-session; the script, mpDris2 and the bus daemon run below it. Its stderr is
    /// mpDris2's log (and the bus daemon's).
    let process: ChildProcess
    /// The private bus (what playerctl gets as DBUS_SESSION_BUS_ADDRESS).
    let address: String
    private let scriptPID: pid_t
    private let playerPID: pid_t

    /// Starts mpDris2 for the MPD server at `server` (a socket path) with `musicDirectory` as its
    /// library path (for `xesam:url`); the configuration files go to `directory`.
    init(server: String, musicDirectory: URL, in directory: URL) throws {
        let bus = directory.appendingPathComponent("bus.conf")
        try Self.busConfiguration(socketDirectory: directory).write(to: bus, atomically: true, encoding: .utf8)
        let configuration = directory.appendingPathComponent("mpDris2.conf")
        try """
        [Library]
        music_dir = \(musicDirectory.path)

        [Bling]
        mmkeys = False
        notify = False

        """.write(to: configuration, atomically: true, encoding: .utf8)
        process = try ChildProcess(program: "/usr/bin/dbus-run-session",
                                   ["--config-file=\(bus.path)", "--", "/bin/bash", Self.script.path,
                                    configuration.path, server])
        let busLine = process.waitForLine(timeout: 30) { $0.hasPrefix("bus ") }
        let pidLine = process.waitForLine(timeout: 30) { $0.hasPrefix("pids ") }
        let pids = pidLine.map { $0.text.split(separator: " ").dropFirst().compactMap { pid_t($0) } } ?? []
        guard let busLine, pids.count == 2 else {
            process.terminate()
            throw UnixSocketError("the private bus session did not start: \(process.lines.map(\.text)) \(process.standardError)")
        }
        address = String(busLine.text.dropFirst("bus ".count))
        scriptPID = pids[0]
        playerPID = pids[1]
    }

    /// mpDris2's log and the bus daemon's messages.
    var log: String { process.standardError }

    /// mpDris2's complaints: errors, warnings (`Disconnected` when a command failed) and tracebacks.
    var problems: [String] {
        log.split(separator: "\n").map(String.init)
            .filter { $0.contains(" ERROR: ") || $0.contains(" WARNING: ") || $0.contains("Traceback") }
    }

    /// Runs `playerctl ARGUMENTS` on the private bus. (The deadlines here are generous: on a
    /// loaded machine a niced playerctl, mpDris2 and bus may each wait seconds for a core.)
    func playerctl(_ arguments: String..., timeout: Double = 30) throws -> ToolRun {
        try playerctl(arguments, timeout: timeout)
    }

    func playerctl(_ arguments: [String], timeout: Double = 30) throws -> ToolRun {
        try ToolRun.run("/usr/bin/playerctl", arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": address],
                        timeout: timeout)
    }

    /// Runs `playerctl -p mpd ARGUMENTS` until its trimmed output satisfies `condition` or
    /// `timeout` seconds have passed; returns the last run. (mpDris2 learns of the daemon's
    /// changes through `idle`, shortly after the command that made them has returned.)
    @discardableResult
    func waitForPlayer(_ arguments: [String], timeout: Double = 20,
                       until condition: (String) -> Bool) throws -> ToolRun {
        let deadline = ChildProcess.now() + timeout
        while true {
            let run = try playerctl(["-p", "mpd"] + arguments)
            if run.status == 0 && condition(Self.output(run)) { return run }
            if ChildProcess.now() >= deadline || !process.isRunning { return run }
            usleep(50_000)
        }
    }

    /// Waits until `playerctl -l` lists mpDris2's player, `mpd`.
    func waitUntilListed(timeout: Double = 30) throws -> Bool {
        let deadline = ChildProcess.now() + timeout
        repeat {
            if try playerctl("-l").stdout.contains("mpd") { return true }
            usleep(50_000)
        } while ChildProcess.now() < deadline && process.isRunning
        return false
    }

    /// A run's standard output, lines joined, without surrounding white space.
    static func output(_ run: ToolRun) -> String {
        run.stdout.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Ends mpDris2 and the script (SIGTERM to the script, which ends mpDris2 first), whereupon
    /// dbus-run-session stops the bus and exits; anything still running after 10 s is killed.
    func stop() {
        guard process.isRunning else { return }
        kill(scriptPID, SIGTERM)
        if process.wait(timeout: 10) == nil {
            kill(playerPID, SIGKILL)
            kill(scriptPID, SIGKILL)
            process.terminate()
        }
    }

    /// A session bus like Debian's session.conf, listening in `socketDirectory`, but without
    /// service directories or included local configuration.
    private static func busConfiguration(socketDirectory: URL) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(socketDirectory.path)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>

        """
    }
}

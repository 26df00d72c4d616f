import Foundation
import TestSupport
import Testing

/// A real terminal MPD client (ncmpcpp, ncmpc) in tmux, connected through a ``RecordingProxy``
/// to a daemon over Media/ whose queue holds the four songs, checked from three sides: the
/// screen (as the user sees it), the daemon's `status`/`playlistinfo` on a connection of the
/// test's own, and the transcript of everything the client and the daemon said.
///
/// The client gets a private home and `XDG_CONFIG_HOME` holding only the test's config file,
/// so the user's own configuration is never read.
final class TerminalClientRun {
    let daemon: ControlDaemon
    let proxy: RecordingProxy
    let terminal: TerminalSession
    /// Text the client shows only for an error (its status line's prefixes, mpd's messages).
    private let errorMarkers: [String]
    /// The test's own connection to the daemon.
    private let control: UnixSocketClient

    /// Deadline for anything the client or the daemon is waited for: generous, since a test
    /// daemon at nice 19 on a loaded 2-core machine can be starved for seconds. Waits end as
    /// soon as their condition holds.
    static let patience = 20.0

    /// Starts `program` with `configuration` as `~/.config/<configFile>`.
    init(_ program: String, configFile: String, configuration: String, errorMarkers: [String]) throws {
        let daemon = try MPDClientsTests.daemonWithDatabase()
        do {
            _ = try daemon.mpc("add", "/")
            let home = daemon.directory.appendingPathComponent("home")
            let configDirectory = home.appendingPathComponent(".config")
            let file = configDirectory.appendingPathComponent(configFile)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try configuration.write(to: file, atomically: true, encoding: .utf8)
            let proxy = try RecordingProxy(to: daemon.socket, in: daemon.directory)
            self.proxy = proxy
            terminal = try TerminalSession([program], environment: [
                "MPD_HOST": proxy.socket, "HOME": home.path, "XDG_CONFIG_HOME": configDirectory.path,
            ])
            control = try daemon.client()
        } catch {
            daemon.stop()
            throw error
        }
        self.daemon = daemon
        self.errorMarkers = errorMarkers
    }

    /// Ends the client, the proxy and the daemon.
    func close() {
        terminal.close()
        proxy.stop()
        daemon.stop()
    }

    // MARK: - The screen

    /// Waits until the screen satisfies `predicate` and checks that it shows no error; records
    /// an issue naming `what` (with the screen) when it never does.
    @discardableResult
    func waitForScreen(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                       _ predicate: (String) -> Bool) -> String? {
        guard let screen = terminal.waitForScreen(timeout: Self.patience, predicate) else {
            Issue.record("the screen never showed \(what):\n\(terminal.screen())\n\(proxy.transcript)", sourceLocation: sourceLocation)
            return nil
        }
        expectNoErrorShown(screen, sourceLocation: sourceLocation)
        return screen
    }

    /// Waits until the client's status line (the screen's last non-blank line) satisfies `predicate`.
    @discardableResult
    func waitForStatusLine(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                           _ predicate: @escaping (String) -> Bool) -> String? {
        waitForScreen(what, sourceLocation: sourceLocation) { predicate(Self.statusLine(of: $0)) }
            .map(Self.statusLine(of:))
    }

    func expectNoErrorShown(_ screen: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for marker in errorMarkers {
            #expect(!screen.contains(marker), "the client shows an error (\(marker)):\n\(screen)", sourceLocation: sourceLocation)
        }
    }

    static func statusLine(of screen: String) -> String {
        screen.split(separator: "\n").last { !$0.allSatisfy(\.isWhitespace) }.map(String.init) ?? ""
    }

    // MARK: - The daemon

    /// Polls `command` (`status`, `currentsong`) until `condition` holds for its values;
    /// records an issue naming `what` if it never does.
    @discardableResult
    func waitForStatus(_ what: String, command: String = "status", sourceLocation: SourceLocation = #_sourceLocation,
                       until condition: ([String: String]) -> Bool) throws -> [String: String] {
        let deadline = ChildProcess.now() + Self.patience
        var status = try values(command)
        while !condition(status) && ChildProcess.now() < deadline {
            usleep(20_000)
            status = try values(command)
        }
        if !condition(status) {
            Issue.record("the daemon never had \(what): \(status)\n\(proxy.transcript)", sourceLocation: sourceLocation)
        }
        return status
    }

    /// The daemon's answer to `command` as a dictionary (first of repeated keys).
    func values(_ command: String) throws -> [String: String] {
        valueMap(replyPairs(try control.request(command, timeout: Self.patience)))
    }

    /// The queue's files, in order.
    func queueFiles() throws -> [String] {
        replyPairs(try control.request("playlistinfo", timeout: Self.patience)).filter { $0.key == "file" }.map(\.value)
    }

    /// Waits until the client has sent a command matching `pattern`; returns the match.
    @discardableResult
    func waitForCommand<Output>(_ pattern: Regex<Output>, sourceLocation: SourceLocation = #_sourceLocation) -> Regex<Output>.Match? {
        guard let line = proxy.waitForRequest(timeout: Self.patience, { $0.wholeMatch(of: pattern) != nil }) else {
            Issue.record("the client never sent the command: \(proxy.transcript)", sourceLocation: sourceLocation)
            return nil
        }
        return line.wholeMatch(of: pattern)
    }

    /// The whole conversation so far: one connection (no reconnect) and no error reply.
    func expectCleanConversation(sourceLocation: SourceLocation = #_sourceLocation) {
        let transcript = proxy.transcript
        #expect(transcript.connections == 1, "the client reconnected: \(transcript)", sourceLocation: sourceLocation)
        #expect(transcript.errors.isEmpty, "the daemon answered with errors: \(transcript)", sourceLocation: sourceLocation)
    }

    /// A client that redraws and idles costs the daemon next to nothing (over 2 s).
    func expectDaemonIdles(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let pid = daemon.process.processIdentifier
        let before = try #require(ProcessStatistics.cpuSeconds(pid))
        let start = ChildProcess.now()
        _ = terminal.waitForScreen(timeout: 2) { _ in false }
        let cpu = (try #require(ProcessStatistics.cpuSeconds(pid)) - before) / (ChildProcess.now() - start)
        #expect(cpu < 0.2, "the daemon used \(cpu * 100) % of a core with the client connected", sourceLocation: sourceLocation)
    }
}

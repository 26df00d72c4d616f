import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `queueplayerd` for the streaming tests: an empty music directory of its own (or the one
/// given), a control socket in a scratch directory, its state there too (so that a second
/// daemon on the same directory restores what the first saved), and `extra` arguments
/// (`--output`, `--stream-retry-time`).
final class StreamDaemon {
    let directory: URL
    let control: ControlDaemon
    var socket: String { control.socket }
    var process: ChildProcess { control.process }
    let client: UnixSocketClient

    init(_ extra: [String], directory: URL? = nil, music: URL? = nil) throws {
        self.directory = try directory ?? TestMedia.scratchDirectory()
        let music = music ?? self.directory.appendingPathComponent("music")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        let state = self.directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // The directory is kept when the daemon stops: the next daemon on it restores the state.
        control = try ControlDaemon(["--music-directory", music.path] + extra, outputs: [], directory: self.directory,
                                    environment: ["XDG_STATE_HOME": state.path], readyTimeout: 10)
        client = try UnixSocketClient.connect(path: control.socket)
        _ = try client.readLine(timeout: 5)
    }

    /// Sends `command` and returns its reply lines (the daemon's log added to a failure).
    @discardableResult
    func request(_ command: String, timeout: Double = 10) throws -> [String] {
        do {
            return try client.request(command, timeout: timeout)
        } catch {
            throw UnixSocketError("\(command.debugDescription): \(error); stderr: \(process.standardError.suffix(3000))")
        }
    }

    /// Sends `command` and expects `OK`.
    func run(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reply = try request(command)
        #expect(reply == ["OK"], "\(command): \(reply)", sourceLocation: sourceLocation)
    }

    /// `command`'s reply as a dictionary (the first of repeated keys wins).
    func values(_ command: String) throws -> [String: String] {
        valueMap(replyPairs(try request(command)))
    }

    /// Polls `command` (every 20 ms) until `condition` holds or `timeout` passes; returns the last reply.
    @discardableResult
    func wait(for command: String = "status", timeout: Double, until condition: ([String: String]) -> Bool) throws -> [String: String] {
        try poll(timeout: timeout, { try values(command) }, until: condition)
    }

    /// Runs the real `/usr/bin/mpc` against this daemon.
    func mpc(_ arguments: String..., timeout: Double = 10) throws -> ToolRun {
        try ToolRun.run("/usr/bin/mpc", arguments, environment: ["MPD_HOST": socket], timeout: timeout)
    }

    /// The daemon's `cannot play:` log lines.
    var cannotPlay: [String] {
        process.standardError.split(separator: "\n").filter { $0.contains("cannot play: ") }.map(String.init)
    }

    /// Ends the daemon with SIGTERM (it saves its state) and expects a clean exit.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        client.close()
        process.send(SIGTERM)
        let status = process.wait(timeout: 30)
        #expect(status == 0, "exit \(String(describing: status)); stderr: \(process.standardError.suffix(3000))",
                sourceLocation: sourceLocation)
        process.terminate()
    }

    deinit { process.terminate() }
}

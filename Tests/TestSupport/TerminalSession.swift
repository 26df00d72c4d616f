import Foundation

/// A terminal program (ncmpcpp, ncmpc) run in a detached tmux session of a private tmux
/// server, driven as a person would: keys sent with `send-keys`, the screen read with
/// `capture-pane`.
///
/// Each session has its own server socket, so tests never meet each other's sessions or
/// the user's own tmux. Waiting is always for a condition on the screen, with a deadline.
public final class TerminalSession: @unchecked Sendable {
    // Immutable after init.
    private let socket: String
    private let target = "main"

    /// Starts `command` in a `columns` x `rows` terminal; `environment` is added to the program's.
    public init(_ command: [String], environment: [String: String] = [:], columns: Int = 120, rows: Int = 40) throws {
        socket = try TestMedia.scratchDirectory().appendingPathComponent("tmux.sock").path
        let exports = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoted($0.value))" }
        let line = (["env", "TERM=xterm-256color", "LANG=C.UTF-8"] + exports + command.map(Self.quoted)).joined(separator: " ")
        try tmux(["-f", "/dev/null", "new-session", "-d", "-s", target, "-x", "\(columns)", "-y", "\(rows)", line])
    }

    deinit { close() }

    /// Types `keys` (tmux key names: `Enter`, `Down`, `q`, `C-c`, or literal text with `literal`).
    public func send(_ keys: String..., literal: Bool = false) throws {
        try tmux(["send-keys", "-t", target] + (literal ? ["-l"] : []) + keys)
    }

    /// What the terminal shows now, one line per row.
    public func screen() -> String {
        (try? tmuxOutput(["capture-pane", "-p", "-t", target])) ?? ""
    }

    /// Waits until the screen satisfies `predicate`; returns that screen, or nil after `timeout` seconds.
    @discardableResult
    public func waitForScreen(timeout: Double = 10, _ predicate: (String) -> Bool) -> String? {
        let deadline = ChildProcess.now() + timeout
        repeat {
            let shown = screen()
            if predicate(shown) { return shown }
            usleep(50_000)
        } while ChildProcess.now() < deadline
        return nil
    }

    /// True while the program still runs in the session.
    public var isRunning: Bool {
        ((try? tmuxOutput(["list-panes", "-t", target, "-F", "#{pane_dead}"])) ?? "1").hasPrefix("0")
    }

    /// Ends the session and its server.
    public func close() {
        _ = try? tmux(["kill-server"])
    }

    // MARK: - Private

    private func tmux(_ arguments: [String]) throws {
        _ = try tmuxOutput(arguments)
    }

    private func tmuxOutput(_ arguments: [String]) throws -> String {
        let child = try ChildProcess(program: "/usr/bin/tmux", ["-S", socket] + arguments)
        guard child.wait(timeout: 10) == 0 else {
            throw ChildProcessError("tmux \(arguments.joined(separator: " ")) failed: \(child.standardError)")
        }
        return child.lines.map(\.text).joined(separator: "\n")
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

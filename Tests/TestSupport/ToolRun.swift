import Foundation

/// What a finished program printed and how it exited (nil: it did not finish and was killed).
public struct ToolRun: CustomStringConvertible {
    public let command: String
    public let stdout: [String]
    public let stderr: String
    public let status: Int32?

    public static func run(_ program: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: Double) throws -> ToolRun {
        let child = try ChildProcess(program: program, arguments, environment: environment)
        return finish(child, command: ([program] + arguments).joined(separator: " "), timeout: timeout)
    }

    /// Waits for a started child (terminating it after `timeout` seconds).
    public static func finish(_ child: ChildProcess, command: String, timeout: Double) -> ToolRun {
        let status = child.wait(timeout: timeout)
        if status == nil { child.terminate() }
        return ToolRun(command: command, stdout: child.lines.map(\.text), stderr: child.standardError, status: status)
    }

    public var description: String {
        "`\(command)` exited \(status.map(String.init) ?? "(killed: no exit within the timeout)"); stdout: \(stdout); stderr: \(stderr.debugDescription)"
    }
}

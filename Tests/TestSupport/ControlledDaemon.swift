import Foundation

/// What the tests ask of a daemon, in the test process or as a process of its own: its control
/// socket and its log, and from them clients, requests and the one status poll.
public protocol ControlledDaemon {
    /// The control socket's path.
    var socket: String { get }
    /// The daemon's log so far (its stderr, or what the in-process daemon would have written there).
    var standardError: String { get }
}

extension ControlledDaemon {
    /// A raw client that has read, and checked, the greeting.
    public func client() throws -> UnixSocketClient {
        try greetedClient(socket)
    }

    /// Polls `status` (every 20 ms, on a raw connection of its own) until `condition` holds
    /// for the reply or `timeout` seconds have passed; returns the last reply.
    @discardableResult
    public func waitForStatus(timeout: Double = 5, until condition: ([String]) -> Bool) throws -> [String] {
        let client = try client()
        return try poll(timeout: timeout, { try client.request("status") }, until: condition)
    }

    /// Waits until the current song has played for at least `seconds` (by `status`'s `elapsed`).
    public func waitForElapsed(atLeast seconds: Double, timeout: Double = 5) throws {
        let reply = try waitForStatus(timeout: timeout) { (replyValue($0, "elapsed").flatMap(Double.init) ?? -1) >= seconds }
        guard (replyValue(reply, "elapsed").flatMap(Double.init) ?? -1) >= seconds else {
            throw UnixSocketError("elapsed never reached \(seconds) s within \(timeout) s: \(reply)")
        }
    }

    /// Sends one command on a connection of its own and returns its reply as key/value pairs
    /// (throws on `ACK`).
    @discardableResult
    public func request(_ command: String) throws -> [String: String] {
        try requestFields(socket, command)
    }

    public func status() throws -> [String: String] { try request("status") }

    /// Polls `status` (a connection each time, every 10 ms) until `predicate` holds, up to
    /// `timeout` seconds; returns the last status.
    @discardableResult
    public func waitForStatus(timeout: Double, _ predicate: ([String: String]) -> Bool) throws -> [String: String] {
        try poll(timeout: timeout, every: 0.01, status, until: predicate)
    }

    /// Waits up to `timeout` seconds for the log to satisfy `predicate` (a process's stderr is
    /// read by another thread, so a line the daemon wrote may arrive a moment after its effect).
    @discardableResult
    public func waitForStandardError(timeout: Double = 2, _ predicate: (String) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { predicate(standardError) }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `key: value` lines of an MPD reply (without the final `OK`) as pairs, in order.
public func replyPairs(_ lines: [String]) -> [(key: String, value: String)] {
    lines.filter { $0 != "OK" && $0 != "list_OK" }.compactMap { line in
        guard let separator = line.range(of: ": ") else { return nil }
        return (String(line[..<separator.lowerBound]), String(line[separator.upperBound...]))
    }
}

/// The value of `key` in an MPD reply.
public func replyValue(_ lines: [String], _ key: String) -> String? {
    replyPairs(lines).first { $0.key == key }?.value
}

/// Pairs as a dictionary (the first of repeated keys wins).
public func valueMap(_ pairs: [(key: String, value: String)]) -> [String: String] {
    var values: [String: String] = [:]
    for pair in pairs where values[pair.key] == nil { values[pair.key] = pair.value }
    return values
}

/// The one poll of the daemon tests, in process or not: asks `request` (a `status`, say), then
/// again every `interval` seconds until `condition` holds for the reply or `timeout` seconds
/// have passed; returns the last reply.
public func poll<Reply>(timeout: Double, every interval: Double = 0.02, _ request: () throws -> Reply,
                        until condition: (Reply) -> Bool) rethrows -> Reply {
    let deadline = ChildProcess.now() + timeout
    var reply = try request()
    while !condition(reply) && ChildProcess.now() < deadline {
        var none = pollfd()
        _ = Glibc.poll(&none, 0, Int32(interval * 1000))
        reply = try request()
    }
    return reply
}

/// Sends one command on a connection of its own to the control socket at `path` (its greeting
/// read) and returns the reply as key/value pairs; throws on `ACK`.
public func requestFields(_ path: String, _ command: String) throws -> [String: String] {
    let client = try UnixSocketClient(path: path)
    defer { client.close() }
    _ = try client.readLine(timeout: 5)
    let lines = try client.request(command)
    guard lines.last == "OK" else { throw UnixSocketError("\(command): \(lines)") }
    var fields: [String: String] = [:]
    for line in lines.dropLast() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[String(line[..<colon])] = String(line[line.index(colon, offsetBy: 2)...])
    }
    return fields
}

/// A client of the control socket at `path` that has read, and checked, mpd's greeting.
public func greetedClient(_ path: String) throws -> UnixSocketClient {
    let client = try UnixSocketClient(path: path)
    let greeting = try client.readLine(timeout: 5)
    guard greeting == "OK MPD 0.23.5" || (greeting?.hasPrefix("OK MPD 0.2") ?? false) else {
        throw UnixSocketError("unexpected greeting \(String(describing: greeting))")
    }
    return client
}

public enum ControlSocketExpectations {
    /// mpc's third line for a daemon without a mixer and with every option off (transcript 52).
    public static let volumeLine = "volume:100%   repeat: off   random: off   single: off   consume: off"
    public static let artist = "queueplayerd project"
    public static let album = "queueplayerd samples"
    /// `Media/`'s items: file, Title, whole seconds (mpd's `time:` total), `duration:`.
    public static let media: [(file: String, title: String, seconds: Int, duration: String)] = [
        ("01-morning-sine.mp3", "Morning (sine, C major)", 18, "18.125"),
        ("02-evening-triangle.mp3", "Evening (triangle, A minor)", 20, "20.000"),
        ("03-noon-pluck-22k-mono.mp3", "Noon (pluck, G major, 22 kHz mono)", 14, "13.913"),
        ("04-night-pluck.mp3", "Night (pluck and sine, E-flat major)", 13, "13.000"),
    ]
    /// mpc's `[Artist - ]Title` line for each item.
    public static var songLines: [String] { media.map { "\(artist) - \($0.title)" } }
}

/// A client of the control socket at `path` that got the greeting, tried until `timeout`.
public func waitForGreetedClient(_ path: String, timeout: Double) -> UnixSocketClient? {
    let deadline = ChildProcess.now() + timeout
    while ChildProcess.now() < deadline {
        if let client = try? greetedClient(path) { return client }
        _ = waitUntil(timeout: 0.1) { false }
    }
    return nil
}

import Foundation
import TestSupport

/// `socat -v` between a real client and the daemon's control socket: the client connects to
/// ``socket`` as it would to the daemon, and the test reads back everything both sides said.
///
/// A terminal client shows only some of the daemon's errors, briefly, on its status line; the
/// transcript shows all of them (every `ACK` line) and every reconnection (a new greeting),
/// whatever the screen showed when the test looked.
final class RecordingProxy {
    /// Where the client connects.
    let socket: String
    private let process: ChildProcess

    /// Listens at `directory/proxy.sock` and forwards each connection to `target`.
    init(to target: String, in directory: URL) throws {
        socket = directory.appendingPathComponent("proxy.sock").path
        process = try ChildProcess(program: "/usr/bin/socat",
                                   ["-v", "UNIX-LISTEN:\(socket),fork", "UNIX-CONNECT:\(target)"])
        // Not a probe connection: that would be a conversation of its own in the transcript.
        // The file exists from socat's bind, before its listen: until then a connection is refused,
        // so wait until the kernel lists the socket as listening (`/proc/net/unix`).
        let deadline = ChildProcess.now() + 10
        while !Self.isListening(socket) {
            guard ChildProcess.now() < deadline, process.isRunning else {
                process.terminate()
                throw UnixSocketError("socat did not listen at \(socket): \(process.standardError)")
            }
            usleep(10_000)
        }
    }

    /// Whether a Unix socket bound at `path` listens: its `/proc/net/unix` line has the
    /// accepting flag (`__SO_ACCEPTCON`, 0x10000).
    static func isListening(_ path: String) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/unix", encoding: .utf8) else { return false }
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 8 && fields[7] == path && (Int(fields[3], radix: 16) ?? 0) & 0x10000 != 0
        }
    }

    /// Everything recorded so far.
    var transcript: Transcript { Transcript(socatLog: process.standardError) }

    /// Waits until the client has sent a line satisfying `predicate`; returns it, or nil after `timeout` s.
    func waitForRequest(timeout: Double = 10, _ predicate: (String) -> Bool) -> String? {
        let deadline = ChildProcess.now() + timeout
        repeat {
            if let line = transcript.requests.last(where: predicate) { return line }
            usleep(20_000)
        } while ChildProcess.now() < deadline
        return nil
    }

    func stop() { process.terminate() }

    /// A conversation as `socat -v` logs it: a header per chunk (`> ...` client to daemon,
    /// `< ...` daemon to client, `from=0` on a connection's first chunk), then the chunk's text.
    struct Transcript: CustomStringConvertible {
        /// The lines the client sent, in order.
        private(set) var requests: [String] = []
        /// The lines the daemon sent, in order.
        private(set) var replies: [String] = []
        /// Connections made (each begins with the daemon's greeting).
        private(set) var connections = 0

        init(socatLog: String) {
            var direction: Character?
            // Only whole lines: socat may be caught mid-write (a reply read as `ACK [2@0] {seek`).
            var lines = socatLog.split(separator: "\n", omittingEmptySubsequences: false)
            if !socatLog.hasSuffix("\n") { lines.removeLast() }
            for line in lines {
                if let header = line.wholeMatch(of: #/([<>]) \d{4}/\d\d/\d\d [\d:.]+ +length=\d+ from=(\d+) to=\d+/#) {
                    direction = header.1.first
                    if direction == "<" && header.2 == "0" { connections += 1 }
                } else if !line.isEmpty {
                    if direction == ">" { requests.append(String(line)) }
                    if direction == "<" { replies.append(String(line)) }
                }
            }
        }

        /// The daemon's error replies.
        var errors: [String] { replies.filter { $0.hasPrefix("ACK ") } }

        /// What the client asked, without the idle/status polling every client does all the time.
        var commands: [String] { requests.filter { !["idle", "noidle", "status"].contains($0) } }

        var description: String { "\(connections) connection(s); commands: \(commands); errors: \(errors)" }
    }
}

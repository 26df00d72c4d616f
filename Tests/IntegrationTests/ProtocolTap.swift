import Foundation
import TestSupport

/// A recording relay in front of a daemon's control socket: `socat -v` listens on ``path``,
/// passes every byte on to the daemon and writes both directions to its stderr.
///
/// The daemon logs no commands, and a client such as mpDris2 hides an `ACK` (python-mpd2
/// raises, mpDris2 reconnects and carries on), so a test that wants to know whether the daemon
/// ever refused a real client reads the conversation here.
final class ProtocolTap {
    let path: String
    let process: ChildProcess

    /// Starts the relay at `<directory>/tap.sock` for the daemon socket `daemonSocket`.
    init(_ daemonSocket: String, in directory: URL) throws {
        path = directory.appendingPathComponent("tap.sock").path
        process = try ChildProcess(program: "/usr/bin/socat",
                                   ["-v", "UNIX-LISTEN:\(path),fork", "UNIX-CONNECT:\(daemonSocket)"])
        guard UnixSocketClient.waitUntilAccepting(path, timeout: 5) else {
            process.terminate()
            throw UnixSocketError("socat did not listen on \(path) within 5 s: \(process.standardError)")
        }
    }

    /// What socat wrote: per chunk a header (`> date length=N from=A to=B`, `>` from the client,
    /// `<` from the daemon), then the chunk's text.
    var transcript: String { process.standardError }

    /// The lines the clients sent (their commands).
    var commands: [String] { lines(from: ">") }

    /// The daemon's refusals (`ACK [code@n] {command} message`).
    var acks: [String] { lines(from: "<").filter { $0.hasPrefix("ACK ") } }

    func stop() { process.terminate() }

    private func lines(from direction: Character) -> [String] {
        var current: Character?
        var found: [String] = []
        for line in transcript.split(separator: "\n") {
            if line.wholeMatch(of: #/[<>] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+ +length=\d+ from=\d+ to=\d+/#) != nil {
                current = line.first
            } else if current == direction {
                found.append(String(line))
            }
        }
        return found
    }
}

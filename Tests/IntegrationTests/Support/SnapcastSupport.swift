import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real snapserver reading a FIFO and a real snapclient writing what it plays to a file
/// (`--player file`), on 127.0.0.1 with a private port, configuration and state directory, so
/// tests never meet each other or a system's Snapcast.
final class SnapcastPair {
    /// The FIFO snapserver reads (created by it, `mode=create`).
    let fifo: String
    /// The raw S16LE 44.1 kHz stereo the client played (silence included).
    let capture: URL
    let server: ChildProcess
    let client: ChildProcess

    /// Starts both in `directory` and waits until the client has its settings from the server.
    init(directory: URL, timeout: Double = 10) throws {
        fifo = directory.appendingPathComponent("snapfifo").path
        capture = directory.appendingPathComponent("client.raw")
        let port = try Self.freePort()
        let configuration = directory.appendingPathComponent("snapserver.conf")
        try """
            [server]
            threads = 2
            datadir = \(directory.path)
            [http]
            enabled = false
            [tcp]
            enabled = false
            [stream]
            bind_to_address = 127.0.0.1
            port = \(port)
            source = pipe://\(fifo)?name=queueplayerd&sampleformat=44100:16:2&codec=pcm&mode=create
            [logging]
            sink = stdout
            filter = *:info

            """.write(to: configuration, atomically: true, encoding: .utf8)
        server = try ChildProcess(program: "/usr/bin/snapserver", ["-c", configuration.path])
        let deadline = ChildProcess.now() + timeout
        while !Self.accepts(port: port) {
            guard ChildProcess.now() < deadline, server.isRunning else {
                server.terminate()
                throw UnixSocketError("snapserver did not listen on 127.0.0.1:\(port): \(server.lines.map(\.text)) \(server.standardError)")
            }
            var none = pollfd()
            _ = poll(&none, 0, 20)
        }
        // `--mixer none`: no volume stage at all, so samples pass through bit for bit.
        client = try ChildProcess(program: "/usr/bin/snapclient",
                                  ["-h", "127.0.0.1", "-p", "\(port)", "--hostID", "queueplayerd-test-\(UUID().uuidString)",
                                   "--player", "file:filename=\(capture.path)", "--mixer", "none", "--logsink", "stdout"])
        guard client.waitForLine(timeout: max(0.1, deadline - ChildProcess.now()), where: { $0.contains("ServerSettings") }) != nil else {
            stop()
            throw UnixSocketError("snapclient did not get the server's settings: \(client.lines.map(\.text)) \(client.standardError)")
        }
    }

    func stop() {
        client.terminate()
        server.terminate()
    }

    /// A TCP port on 127.0.0.1 that nothing listens on (the kernel's choice, released again).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw UnixSocketError("bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// How a capture holds an expected stream when something between may add or drop a few
/// samples of its own (snapclient corrects its playback by single samples to stay in sync,
/// and snapserver reads silence if the pipe runs dry): the stream is followed block by block
/// (1,024 frames), each found byte for byte near where the one before ended.
struct StreamTrace {
    /// Frames added (+) or dropped (-) between consecutive blocks, in order.
    var adjustments: [Int] = []
    /// Blocks not found byte for byte (an adjustment fell inside them).
    var blocksMissing = 0
    var blocks = 0
    /// For each boundary: nothing added or dropped at the boundary itself. Either the 1,024
    /// frames before it and the 1,024 after it are in the capture as one run, byte for byte,
    /// or, when one of snapclient's own adjustments fell inside that window (it adds or drops
    /// a sample now and then, more often on a loaded machine), the 64 frames just before the
    /// boundary and the 64 just after are found each byte for byte and end to end. A gap the
    /// daemon made (a dropped write, 1,024 frames; snapserver's silence, 882) parts them.
    var boundariesExact: [Bool] = []

    /// Traces `expected` (starting at byte `start` of `capture`), whose pieces meet at the byte
    /// offsets `boundaries`.
    init(expected: Data, boundaries: [Int], in capture: Data, from start: Int) {
        let block = 4096
        let slack = 16 * block
        var predicted = start
        var adjustmentsBefore: [(offset: Int, frames: Int)] = []
        for offset in stride(from: 0, to: expected.count - block + 1, by: block) {
            blocks += 1
            let piece = expected[offset..<(offset + block)]
            if let found = Self.find(piece, in: capture, near: predicted, slack: slack) {
                if found != predicted {
                    adjustments.append((found - predicted) / 4)
                    adjustmentsBefore.append((offset, (found - predicted) / 4))
                }
                predicted = found + block
            } else {
                blocksMissing += 1
                // An adjustment fell inside this block: its two ends are each found, but not a
                // block apart. (In the first block it shows only this way: the start was located
                // by the first piece's middle, after the adjustment.) Garbage written by the
                // daemon leaves an end unfound, or both a block apart: no adjustment then.
                let edge = 256
                if let head = Self.find(piece.prefix(edge), in: capture, near: predicted, slack: slack),
                   let tail = Self.find(piece.suffix(edge), in: capture, near: predicted + block - edge, slack: slack) {
                    let shift = tail + edge - head - block
                    if shift != 0 {
                        adjustments.append(shift / 4)
                        adjustmentsBefore.append((offset, shift / 4))
                    }
                    predicted = tail + edge
                } else {
                    predicted += block
                }
            }
        }
        for boundary in boundaries {
            let window = expected[max(0, boundary - block)..<min(expected.count, boundary + block)]
            let shift = adjustmentsBefore.filter { $0.offset < boundary }.reduce(0) { $0 + $1.frames * 4 }
            if Self.find(window, in: capture, near: start + max(0, boundary - block) + shift, slack: slack) != nil {
                boundariesExact.append(true)
                continue
            }
            let edge = 64 * 4
            guard boundary >= edge, boundary + edge <= expected.count else {
                boundariesExact.append(false)
                continue
            }
            let near = start + boundary + shift
            let before = Self.find(expected[(boundary - edge)..<boundary], in: capture, near: near - edge, slack: slack)
            let after = Self.find(expected[boundary..<(boundary + edge)], in: capture, near: near, slack: slack)
            boundariesExact.append(before != nil && after != nil && after! == before! + edge)
        }
    }

    /// Where `piece` is in `capture`, frame-aligned, within `slack` bytes of `near`.
    static func find(_ piece: Data, in capture: Data, near: Int, slack: Int) -> Int? {
        let lower = max(0, near - slack)
        let upper = min(capture.count - piece.count, near + slack)
        guard lower <= upper else { return nil }
        return piece.withUnsafeBytes { needle in
            capture.withUnsafeBytes { haystack in
                // Nearest first: the exact place, then outwards frame by frame.
                for distance in stride(from: 0, through: slack, by: 4) {
                    for position in distance == 0 ? [near] : [near - distance, near + distance]
                    where position >= lower && position <= upper && (position - near) % 4 == 0 {
                        if memcmp(haystack.baseAddress! + position, needle.baseAddress!, needle.count) == 0 { return position }
                    }
                }
                return nil
            }
        }
    }
}


import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The web port against clients that do not speak HTTP properly, over TCP: silent and trickling
/// connections, requests that cannot be parsed. Each is answered or closed, and none of them keeps
/// the page or the WebSocket from others.
@Suite(.serialized) struct WebPortHostileClientTests {
    /// `host` and `port` of a daemon's `http://host:port`.
    static func endpoint(_ daemon: InProcessWebDaemon) -> (host: String, port: Int) {
        let address = daemon.base.dropFirst("http://".count)
        let colon = address.lastIndex(of: ":")!
        return (String(address[..<colon]), Int(address[address.index(after: colon)...])!)
    }

    static func connect(_ daemon: InProcessWebDaemon) throws -> UnixSocketClient {
        let (host, port) = endpoint(daemon)
        return try UnixSocketClient(host: host, port: port)
    }

    /// Sends a request (which asks for the connection to be closed after it) and reads the answer
    /// to the end: the answer, and whether the daemon closed the connection within `timeout`.
    static func exchange(_ daemon: InProcessWebDaemon, _ request: [UInt8], timeout: Double = 10) throws -> (answer: String, closed: Bool) {
        let client = try connect(daemon)
        defer { client.close() }
        _ = client.sendAvailable(request, timeout: timeout)
        let (closed, received) = client.waitForEndOfFile(timeout: timeout)
        return (String(decoding: received, as: UTF8.self), closed)
    }

    static func pageRequest(_ daemon: InProcessWebDaemon) -> [UInt8] {
        let (host, port) = endpoint(daemon)
        return Array("GET / HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
    }

    static let malformed: [(name: String, bytes: [UInt8], status: Int)] = [
        ("an 80 KiB header", Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 80 * 1024))\r\n\r\n".utf8), 431),
        ("Transfer-Encoding and Content-Length",
         Array("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n".utf8), 400),
        ("TLS bytes", [0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03] + Array(repeating: 0x2a, count: 32), 400),
        ("HTTP/0.9", Array("GET /\r\n\r\n".utf8), 400),
    ]

    /// Each is answered at once with a 4xx and closed, as nginx answers them; the deadline is far
    /// below the request timeout, so the answer is not a timeout's.
    @Test func malformedRequestsAreAnsweredAtOnceAndClosed() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        for (name, bytes, status) in Self.malformed {
            let started = ChildProcess.now()
            let (answer, closed) = try Self.exchange(daemon, bytes, timeout: 5)
            let seconds = ChildProcess.now() - started
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(name): \(answer.prefix(200).debugDescription)")
            #expect(closed, "\(name): closed after \(seconds) s")
        }
        #expect(try Self.exchange(daemon, Self.pageRequest(daemon)).answer.hasPrefix("HTTP/1.1 200 "))
    }

    /// With a 2 s request timeout: connections that send nothing, or trickle a header a byte at
    /// a time, fill every one of the 64 connections the port takes; each is closed, and the page
    /// is served once they are (before, they held the port for ever).
    @Test func silentAndTricklingConnectionsAreClosedAndDoNotLockOutThePage() throws {
        let timeout = 2.0
        let daemon = try InProcessWebDaemon(environment: ["QUEUEPLAYERD_HTTP_REQUEST_TIMEOUT": "\(timeout)"])
        defer { daemon.stop() }
        let started = ChildProcess.now()
        let silent = try (0..<63).map { _ in try Self.connect(daemon) }
        let trickler = try Self.connect(daemon)
        defer { (silent + [trickler]).forEach { $0.close() } }
        let (host, port) = Self.endpoint(daemon)
        let head = Array("GET / HTTP/1.1\r\nHost: \(host):\(port)\r\nX-Slow: \(String(repeating: "a", count: 200))\r\n\r\n".utf8)
        var sent = 0
        var trickleClosedAfter: Double?
        // A byte every 100 ms (the daemon's answer, or its close, ends it); never the whole head.
        while trickleClosedAfter == nil && ChildProcess.now() - started < timeout + 20 {
            if trickler.sendAvailable([head[sent]], timeout: 1).error != nil {
                trickleClosedAfter = ChildProcess.now() - started
                break
            }
            sent += 1
            switch trickler.receive(timeout: 0.1) {
            case .endOfFile, .failed: trickleClosedAfter = ChildProcess.now() - started
            case .data, .timedOut: break
            }
        }
        #expect(sent < head.count, "the head was never complete")
        #expect(trickleClosedAfter != nil, "the trickling connection was closed")
        let deadline = started + timeout + 20
        for client in silent {
            #expect(client.waitForEndOfFile(timeout: max(deadline - ChildProcess.now(), 0.1)).closed, "a silent connection was closed")
        }
        print("request timeout \(timeout) s: the trickler closed after \(trickleClosedAfter.map { String(format: "%.2f", $0) } ?? "-") s, "
              + "63 silent connections after \(String(format: "%.2f", ChildProcess.now() - started)) s at most")
        let page = try Self.exchange(daemon, Self.pageRequest(daemon))
        #expect(page.answer.hasPrefix("HTTP/1.1 200 "), "\(page.answer.prefix(200).debugDescription)")
        let steps = try daemon.run("commands")
        #expect(steps.ok("still usable") != nil, "the WebSocket is served too")
    }

    /// Guesses of the token, one after another and then many at once: the first ten are answered
    /// at once, then about four a second, each logged without what it offered; the right token,
    /// sent while twenty guesses wait, is answered at once.
    @Test func wrongTokensAreSlowedAndLoggedAndTheRightOneIsNot() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        let token = "right-token-0123456789"
        try (token + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
        let daemon = try InProcessWebDaemon { $0.httpTokenFile = tokenFile.path }
        defer { daemon.stop() }
        let (host, port) = Self.endpoint(daemon)
        func request(_ offered: String) -> [UInt8] {
            Array("GET /?token=\(offered) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        }
        let started = ChildProcess.now()
        for guess in 0..<30 {
            let (answer, closed) = try Self.exchange(daemon, request("guess-\(guess)"))
            #expect(answer.hasPrefix("HTTP/1.1 401 ") && closed, "guess \(guess): \(answer.prefix(100).debugDescription)")
        }
        let sequential = ChildProcess.now() - started
        // 20 past the first ten, each held 0.25 s: 5 s (a bound from below, which load only raises).
        #expect(sequential >= 4.5, "30 guesses one after another took \(sequential) s")

        let guesses = try (0..<20).map { guess in
            let client = try Self.connect(daemon)
            try client.send(String(decoding: request("many-\(guess)"), as: UTF8.self))
            return client
        }
        defer { guesses.forEach { $0.close() } }
        let rightSent = ChildProcess.now()
        let right = try Self.exchange(daemon, request(token))
        let rightSeconds = ChildProcess.now() - rightSent
        #expect(right.answer.hasPrefix("HTTP/1.1 200 "), "\(right.answer.prefix(100).debugDescription)")
        #expect(rightSeconds < 2, "the right token waited \(rightSeconds) s")
        var lastWrong = 0.0
        for client in guesses {
            let (closed, received) = client.waitForEndOfFile(timeout: max(rightSent + 20 - ChildProcess.now(), 0.1))
            #expect(closed && String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 401 "))
            lastWrong = ChildProcess.now() - rightSent
        }
        print("30 guesses one after another: \(String(format: "%.2f", sequential)) s; 20 at once: the last answered after "
              + "\(String(format: "%.2f", lastWrong)) s; the right token beside them after \(String(format: "%.3f", rightSeconds)) s")
        #expect(lastWrong >= 3, "20 guesses at once were all answered within \(lastWrong) s")
        let log = daemon.standardError
        #expect(log.components(separatedBy: "without the right token").count - 1 == 50, "every failure is logged")
        #expect(!log.contains("guess-") && !log.contains("many-"), "what a guess offered is not logged")
    }
}

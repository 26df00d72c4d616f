import Foundation
import Logging
import NIOCore
import NIOHTTP1
import TestSupport
import Testing
@testable import DaemonCore
@testable import WebAPI

/// Who may use the page and the WebSocket: Host, token, Origin.
@Suite struct WebAccessTests {
    let loopback = WebAccess(address: HTTPListenAddress(host: "127.0.0.1", port: 6680), token: nil)
    let everywhere = WebAccess(address: HTTPListenAddress(host: "0.0.0.0", port: 6680), token: "t0k")

    func request(host: String? = "127.0.0.1:6680", origin: String? = nil, authorization: String? = nil, cookie: String? = nil,
                 query: String? = nil, upgrade: Bool = false) -> WebAccess.Request {
        .init(host: host, origin: origin, authorization: authorization, cookie: cookie, query: query, isWebSocketUpgrade: upgrade)
    }

    @Test func loopbackAnswersOnlyLoopbackNames() {
        for host in ["127.0.0.1:6680", "localhost:6680", "LOCALHOST", "[::1]:6680", "127.1.2.3"] {
            #expect(loopback.check(request(host: host)) == .allowed, "\(host)")
        }
        for host in ["evil.example:6680", "evil.example", "192.168.1.2:6680", "", "[::2]:6680", "127.0.0.1.evil.example"] {
            #expect(loopback.check(request(host: host)) == .badHost, "\(host)")
        }
        #expect(loopback.check(request(host: nil)) == .badHost)
    }

    @Test func theOriginOfAnUpgradeMustBeThePagesOwn() {
        #expect(loopback.check(request(upgrade: true)) == .allowed)
        #expect(loopback.check(request(origin: "http://127.0.0.1:6680", upgrade: true)) == .allowed)
        #expect(loopback.check(request(origin: "http://evil.example", upgrade: true)) == .badOrigin)
        #expect(loopback.check(request(origin: "http://127.0.0.1:6681", upgrade: true)) == .badOrigin)
        #expect(loopback.check(request(origin: "null", upgrade: true)) == .badOrigin)
        #expect(loopback.check(request(origin: "http://evil.example")) == .allowed, "a plain request's Origin does not matter")
    }

    @Test func aTokenByHeaderQueryOrCookie() {
        let host = "192.168.1.2:6680"
        #expect(everywhere.check(request(host: host)) == .badToken)
        #expect(everywhere.check(request(host: host, authorization: "Bearer t0k")) == .allowed)
        #expect(everywhere.check(request(host: host, authorization: "Bearer t0kk")) == .badToken)
        #expect(everywhere.check(request(host: host, query: "a=1&token=t0k")) == .allowed)
        #expect(everywhere.check(request(host: host, query: "token=t0")) == .badToken)
        #expect(everywhere.check(request(host: host, cookie: "x=1; queueplayerd_token=t0k")) == .allowed)
        #expect(everywhere.check(request(host: host, cookie: "queueplayerd_token=nope")) == .badToken)
    }

    @Test func addresses() throws {
        #expect(try HTTPListenAddress.parse("off") == nil)
        #expect(try HTTPListenAddress.parse("6680") == HTTPListenAddress(host: "127.0.0.1", port: 6680))
        #expect(try HTTPListenAddress.parse("0.0.0.0:80") == HTTPListenAddress(host: "0.0.0.0", port: 80))
        #expect(try HTTPListenAddress.parse("[::1]:6680") == HTTPListenAddress(host: "::1", port: 6680))
        #expect(try HTTPListenAddress.parse("localhost:0")?.isLoopback == true)
        #expect(try HTTPListenAddress.parse("127.0.0.1:6680")?.isLoopback == true)
        #expect(try HTTPListenAddress.parse("0.0.0.0:6680")?.isLoopback == false)
        #expect(try HTTPListenAddress.parse("[::]:6680")?.isLoopback == false)
        for bad in ["", "x", "example.org:80", "1.2.3:80", "::1:80", "127.0.0.1:65536", "127.0.0.1:-1", "[::1]6680"] {
            #expect(throws: DaemonOptionError.self, "\(bad)") { try HTTPListenAddress.parse(bad) }
        }
    }

    /// Failures without the right token: the first ten at once, then one every quarter second
    /// however many come together, none held past 5 s; a pause lets the bucket fill again.
    @Test func tokenFailuresAreAnsweredAtOnceThenOneEveryQuarterSecond() {
        var schedule = TokenFailureSchedule()
        #expect((0..<10).map { _ in schedule.delay(failureAt: 100) } == Array(repeating: 0, count: 10))
        #expect(schedule.delay(failureAt: 100) == 0.25)
        #expect(schedule.delay(failureAt: 100) == 0.5)
        // A client that waits for each answer before guessing again: one every 0.25 s.
        var now = 100.5
        for _ in 0..<20 {
            #expect(abs(schedule.delay(failureAt: now) - 0.25) < 1e-9)
            now += 0.25
        }
        // Many at once: the waits grow by 0.25 s each, to 5 s at most.
        let waits = (0..<40).map { _ in schedule.delay(failureAt: now) }
        #expect(waits.max() == 5)
        #expect(zip(waits.dropFirst(), waits).allSatisfy { $0 >= $1 })
        #expect(schedule.count == 72)
        // A minute later the first ten are answered at once again.
        #expect((0..<10).map { _ in schedule.delay(failureAt: now + 60) } == Array(repeating: 0, count: 10))
    }

    /// The gate: 401 without the right token, held as the schedule says; the right token is let
    /// through at once, whatever failed before; 403 for another host.
    @Test func theGateHoldsWrongTokensAndNeverTheRightOne() throws {
        let token = "0123456789abcdef"
        let gate = WebAccessGate(access: WebAccess(address: HTTPListenAddress(host: "0.0.0.0", port: 6680), token: token),
                                 logger: Logger(label: "test"))
        func head(_ uri: String, _ headers: [(String, String)] = []) -> HTTPRequestHead {
            HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: HTTPHeaders([("Host", "192.168.1.2:6680")] + headers))
        }
        let wrong = (0..<30).map { gate.refusal(for: head("/?token=guess\($0)"), peer: nil) }
        #expect(wrong.allSatisfy { $0?.status == .unauthorized })
        #expect(wrong.prefix(10).allSatisfy { $0?.delay == .zero })
        #expect(wrong.suffix(20).allSatisfy { ($0?.delay ?? .zero) >= .milliseconds(200) })
        #expect(gate.refusal(for: head("/?token=" + token), peer: nil) == nil)
        #expect(gate.refusal(for: head("/ws", [("Authorization", "Bearer " + token), ("Upgrade", "websocket")]), peer: nil) == nil)
        #expect(gate.refusal(for: head("/", [("Cookie", "a=1"), ("Cookie", "queueplayerd_token=" + token)]), peer: nil) == nil)
        let upgrade = gate.refusal(for: head("/ws", [("Upgrade", "websocket")]), peer: nil)
        #expect(upgrade?.status == .unauthorized)
        let loopbackGate = WebAccessGate(access: loopback, logger: Logger(label: "test"))
        let rebound = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/ws", headers: ["Host": "evil.example", "Upgrade": "websocket"])
        #expect(loopbackGate.refusal(for: rebound, peer: nil)?.status == .forbidden)
    }

    @Test func aTokenShorterThanSixteenBytesIsRefusedAtStart() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try "0123456789abcde\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(throws: DaemonOptionError.self) { try WebServer.readToken(file: file.path) }
        do {
            _ = try WebServer.readToken(file: file.path)
        } catch {
            #expect(error.description.contains("15 bytes long; it must be at least 16"), "\(error.description)")
        }
        try "0123456789abcdef\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try WebServer.readToken(file: file.path) == "0123456789abcdef")
    }
}

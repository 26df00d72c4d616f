import Foundation
import TestSupport
import Testing

/// A client that writes many requests without waiting for replies (pipelining, as mpc and
/// ncmpcpp do) gets every reply, in order. The daemon runs a client's pipelined cheap
/// commands several to a work item on the controller's queue, while expensive commands
/// (the gate), lists of protocol-level commands, `idle` and `close` run where they belong:
/// the replies must come out as if each had run alone.
@Suite(.serialized) struct ControlSocketPipelineTests {
    /// What one request must answer: a check of its reply lines (which end in `OK` or `ACK`).
    struct Expected {
        let request: String
        let check: ([String]) -> Bool
    }

    static func requests() -> [Expected] {
        var all: [Expected] = []
        let ok: ([String]) -> Bool = { $0 == ["OK"] }
        let status: ([String]) -> Bool = { $0.last == "OK" && $0.contains("state: stop") && $0.contains { $0.hasPrefix("volume: ") } }
        for round in 0..<150 {
            all.append(Expected(request: "status", check: status))
            all.append(Expected(request: "ping", check: ok))
            all.append(Expected(request: "currentsong", check: ok))
            if round % 10 == 3 {
                all.append(Expected(request: "stats") { $0.last == "OK" && $0.contains { $0.hasPrefix("songs: ") } })
            }
            if round % 15 == 7 {
                all.append(Expected(request: "command_list_ok_begin\nping\nping\ncommand_list_end") {
                    $0 == ["list_OK", "list_OK", "OK"]
                })
                all.append(Expected(request: "command_list_begin\nping\nstatus\ncommand_list_end", check: status))
            }
            if round % 20 == 11 {
                all.append(Expected(request: "nosuchcommand") { $0.count == 1 && $0[0].hasPrefix("ACK [5@0] {}") })
            }
            if round % 25 == 13 {
                all.append(Expected(request: "tagtypes") { $0.last == "OK" && $0.contains("tagtype: Artist") })
            }
        }
        all.append(Expected(request: "idle\nnoidle", check: ok))
        all.append(Expected(request: "status", check: status))
        return all
    }

    @Test func pipelinedRequestsAreAllAnsweredInOrder() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let client = try daemon.client()
        let expected = Self.requests()
        let text = expected.map { $0.request + "\n" }.joined() + "close\n"
        let sent = client.sendAvailable(Array(text.utf8), timeout: 10)
        try #require(sent.count == text.utf8.count, "sent \(sent.count) of \(text.utf8.count) bytes")
        for (index, request) in expected.enumerated() {
            let reply = try client.readReply(timeout: 10)
            try #require(request.check(reply), "request \(index) \(request.request.debugDescription): \(reply)")
        }
        let end = client.waitForEndOfFile(timeout: 5)
        #expect(end.closed && end.received.isEmpty, "after close: \(String(decoding: end.received.prefix(200), as: UTF8.self))")
        #expect(daemon.isRunning, "stderr: \(daemon.standardError)")
    }
}

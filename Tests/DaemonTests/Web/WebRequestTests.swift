import Foundation
import Testing
@testable import DaemonCore
@testable import WebAPI

/// The WebSocket's messages: what is a request, and the refusal of everything else.
@Suite struct WebRequestTests {
    @Test func commandsAndSubscriptions() throws {
        #expect(try WebRequest.parse(#"{"id": 1, "command": "status"}"#) == WebRequest(id: .int(1), action: .command("status")))
        #expect(try WebRequest.parse(#"{"id": "a", "command": "next"}"#).id == .string("a"))
        #expect(try WebRequest.parse(#"{"command": "next"}"#).id == nil)
        #expect(try WebRequest.parse(#"{"subscribe": "time", "interval": 0.01}"#).action == .subscribeTime(interval: 0.01))
        #expect(try WebRequest.parse(#"{"subscribe": "time", "interval": 60}"#).action == .subscribeTime(interval: 60))
        #expect(try WebRequest.parse(#"{"subscribe": "boundary", "times": [10, 20.5]}"#).action == .subscribeBoundary(times: [10, 20.5]))
        #expect(try WebRequest.parse(#"{"unsubscribe": 3}"#).action == .unsubscribe(.subscription(3)))
        #expect(try WebRequest.parse(#"{"unsubscribe": "time"}"#).action == .unsubscribe(.allTime))
        #expect(try WebRequest.parse(#"{"unsubscribe": "all"}"#).action == .unsubscribe(.all))
    }

    @Test(arguments: [
        "{not json", "[1]", "42", #"{"id": true, "command": "x"}"#, #"{"command": ""}"#, #"{"command": 3}"#,
        #"{"command": "status\nclear"}"#, #"{"subscribe": "time"}"#, #"{"subscribe": "time", "interval": 0.009}"#,
        #"{"subscribe": "time", "interval": 60.5}"#, #"{"subscribe": "time", "interval": true}"#,
        #"{"subscribe": "time", "interval": "1"}"#, #"{"subscribe": "boundary", "times": []}"#,
        #"{"subscribe": "boundary", "times": [-1]}"#, #"{"subscribe": "boundary", "times": [true]}"#,
        #"{"subscribe": "volume"}"#, #"{"unsubscribe": 1.5}"#, #"{"unsubscribe": "x"}"#, #"{"hello": 1}"#,
    ])
    func refusals(_ text: String) {
        #expect(throws: WebRequest.Refusal.self) { try WebRequest.parse(text) }
    }

    /// A CRLF pair is one Swift Character, equal to neither "\r" nor "\n": the bytes are checked.
    @Test(arguments: ["status\r\nsetvol 5", "status\rsetvol 5", "status\nsetvol 5", "status\r\nidle", "ping\r\n",
                      "command_list_begin\r\nsetvol 5\r\ncommand_list_end"])
    func aLineBreakInsideACommandIsRefused(_ line: String) throws {
        let text = String(decoding: try JSONEncoder().encode(["command": line]), as: UTF8.self)
        do {
            _ = try WebRequest.parse(text)
            Issue.record("accepted \(line.debugDescription)")
        } catch {
            #expect(error.ack == .argument)
            #expect(error.message.contains("no CR or LF"), "\(error.message)")
        }
    }

    @Test func aRefusalKeepsTheID() {
        do {
            _ = try WebRequest.parse(#"{"id": 7, "subscribe": "time", "interval": 0}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.id == .int(7))
            #expect(error.ack == .argument)
        }
    }
}

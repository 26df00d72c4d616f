import Foundation
import HTTPStreaming
import QueuePlayer
import Testing
import TestSupport

/// What a hostile or broken server gets: the item fails with a reason that reads well after
/// `cannot play: <url>: `, and the queue moves on to the file after it, which plays whole.
@Suite(.serialized) struct BadStreamTests {
    static let file = TestMedia.directory.appendingPathComponent("03-noon-pluck-22k-mono.mp3")

    /// Plays `[url, file]`; returns the network item's error text, after checking that the
    /// file after it was heard whole and nothing else.
    func failure(of url: URL, configuration: HTTPStreamingConfiguration = StreamPlayback.quick) async throws -> String? {
        let playback = StreamPlayback([url, Self.file], configuration: configuration)
        let item = playback.items[0]
        #expect(playback.runToEnd())
        #expect(item.status == .failed)
        #expect(playback.sink.captured == (try StreamPlayback.reference(Self.file)), "only the file is heard")
        try await playback.shutdown()
        return item.error?.why
    }

    func answering(_ head: String, _ headers: [(String, String)], body: Data = Data()) throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { _, connection in
            connection.writeHead(head, headers + [("Content-Length", "\(body.count)")])
            connection.write(body)
        }
    }

    @Test(arguments: ["404 Not Found", "410 Gone"]) func goneResources(status: String) async throws {
        let server = try answering(status, [("Content-Type", "text/plain")])
        #expect(try await failure(of: server.url("a.mp3")) == "HTTP \(status)")
        #expect(server.requests.count == 1, "not retried")
    }

    @Test func serverErrorsAreRetriedThenGiveUp() async throws {
        let server = try answering("503 Service Unavailable", [])
        let why = try await failure(of: server.url("a.mp3"))
        #expect(why?.hasPrefix("HTTP 503 Service Unavailable; gave up after retrying for 3 s") == true, "\(String(describing: why))")
        #expect(server.requests.count >= 3, "retried with back-off: \(server.requests.count)")
    }

    @Test func pagesAndOtherFormats() async throws {
        let html = try answering("200 OK", [("Content-Type", "text/html; charset=utf-8")], body: Data("<html></html>".utf8))
        #expect(try await failure(of: html.url("a.mp3")) == "not an MP3 stream: the server sent text/html, not audio")
        let disguised = try answering("200 OK", [("Content-Type", "audio/mpeg")], body: Data("\n<!DOCTYPE html><html>".utf8))
        #expect(try await failure(of: disguised.url("a.mp3")) == "not an MP3 stream: the body is an HTML or XML page, not audio")
        let ogg = try answering("200 OK", [("Content-Type", "audio/mpeg")], body: Data("OggS\0\u{2}".utf8) + Data(count: 4000))
        #expect(try await failure(of: ogg.url("a.mp3")) == "not an MP3 stream: it is an Ogg stream")
        let aac = try answering("200 OK", [("Content-Type", "audio/aacp")], body: Data([0xFF, 0xF1, 0x50, 0x80]))
        #expect(try await failure(of: aac.url("a.mp3")) == "not an MP3 stream: it is an AAC stream (audio/aacp)")
        let noise = try answering("200 OK", [("Content-Type", "audio/mpeg")], body: Data(repeating: 0x41, count: 300_000))
        #expect(try await failure(of: noise.url("a.mp3"))?.hasPrefix("not an MP3 stream") == true)
    }

    @Test func redirectLoopAndRefusedURLs() async throws {
        let loop = try ScriptedHTTPServer { request, connection in
            connection.writeHead("302 Found", [("Location", request.path == "/a" ? "/b" : "/a"), ("Content-Length", "0")])
        }
        #expect(try await failure(of: loop.url("a")) == "a redirect loop")
        #expect(try await failure(of: URL(string: "http://user:secret@127.0.0.1:1/a.mp3")!) == "a URL with credentials in it is refused")
        #expect(try await failure(of: URL(string: "ftp://127.0.0.1/a.mp3")!) == "the scheme ftp: is not played (only http and https)")
    }

    @Test func silentAndTricklingServersTimeOut() async throws {
        let silent = try ScriptedHTTPServer { _, connection in connection.pause(30) }
        let why = try await failure(of: silent.url("a.mp3"))
        #expect(why?.hasPrefix("no answer within 1 s; gave up after retrying for 3 s") == true, "\(String(describing: why))")
        let trickle = try ScriptedHTTPServer { _, connection in
            connection.writeHead("200 OK", [("Content-Type", "audio/mpeg"), ("Content-Length", "100000")])
            while connection.isOpen, connection.write(Data([0xFF])) { connection.pause(0.2) }
        }
        let slow = try await failure(of: trickle.url("a.mp3"))
        #expect(slow?.hasPrefix("the server sends too slowly") == true, "\(String(describing: slow))")
    }

    /// A server that honours ranges and sends a byte at a time: each reconnection resumes where
    /// the last one stopped, and gets a few more bytes, but a connection dropped as too slow
    /// spends the retry budget as any failed one does. The item fails, and the file after it plays.
    @Test func aTricklingServerThatResumesRangesStillUsesUpTheRetryTime() async throws {
        let length = 100_000
        let trickle = try ScriptedHTTPServer { request, connection in
            var headers = [("Content-Type", "audio/mpeg"), ("Accept-Ranges", "bytes"), ("ETag", "\"v1\"")]
            let start = request.header("Range").flatMap { Int($0.dropFirst("bytes=".count).dropLast()) } ?? 0
            if start > 0 {
                headers += [("Content-Range", "bytes \(start)-\(length - 1)/\(length)"), ("Content-Length", "\(length - start)")]
                guard connection.writeHead("206 Partial Content", headers) else { return }
            } else {
                guard connection.writeHead("200 OK", headers + [("Content-Length", "\(length)")]) else { return }
            }
            while connection.isOpen, connection.write(Data([0xFF])) { connection.pause(0.2) }
        }
        let slow = try await failure(of: trickle.url("a.mp3"))
        #expect(slow?.hasPrefix("the server sends too slowly") == true, "\(String(describing: slow))")
        #expect(slow?.contains("gave up after retrying for 3 s") == true, "\(String(describing: slow))")
        // Two connections at the low-speed time of 2 s use up a retry time of 3 s.
        #expect(trickle.requests.count <= 3, "\(trickle.requests.count) connections: \(trickle.requests)")
        #expect(trickle.requests.dropFirst().allSatisfy { $0.header("Range") != nil }, "the reconnections resume")
    }

    @Test func absurdSizesAndMetadata() async throws {
        let huge = try ScriptedHTTPServer { _, connection in
            connection.writeHead("200 OK", [("Content-Type", "audio/mpeg"), ("Content-Length", "100000000000")])
        }
        #expect(try await failure(of: huge.url("a.mp3"))?.hasPrefix("100000000000 bytes, more than any sane episode") == true)
        let interval = try answering("200 OK", [("Content-Type", "audio/mpeg"), ("icy-metaint", "0")])
        #expect(try await failure(of: interval.url("live"))?.hasPrefix("its ICY metadata interval (icy-metaint) is absurd") == true)
        let audio = try Data(contentsOf: Self.file).prefix(100)
        let junk = try answering("200 OK", [("Content-Type", "audio/mpeg"), ("icy-metaint", "100")],
                                 body: audio + Data([1]) + Data([0x53, 0x01, 0x02, 0x03] + [UInt8](repeating: 0x07, count: 12)))
        #expect(try await failure(of: junk.url("live")) == "an ICY metadata block with binary bytes in it: the stream's metadata is malformed")
    }
}

import Foundation
import MPDProtocol
import Testing
@testable import DaemonCore

/// What `add`/`addid`/`load` take as a stream URL, and the answer to what they refuse.
@Suite struct StreamURLTests {
    @Test func httpAndHTTPSURLsWithAHostArePlayed() throws {
        #expect(try StreamURL.parse("http://127.0.0.1:8000/live.mp3").absoluteString == "http://127.0.0.1:8000/live.mp3")
        #expect(try StreamURL.parse("https://radio.example/stream?format=mp3").host == "radio.example")
        #expect(try StreamURL.parse("HTTP://radio.example/a%20b.mp3").absoluteString == "HTTP://radio.example/a%20b.mp3")
    }

    @Test func pathsHaveNoSchemeAndURLsDo() {
        #expect(!StreamURL.hasScheme("music/a.mp3"))
        #expect(!StreamURL.hasScheme("odd name: with :// inside.mp3"))
        #expect(!StreamURL.hasScheme("://nothing"))
        #expect(StreamURL.hasScheme("http://x/"))
        #expect(StreamURL.hasScheme("hls+https://x/"))
    }

    @Test func otherSchemesCredentialsAndMalformedURLsAreRefusedWithAnArgumentError() {
        let refusals: [(String, String)] = [
            ("ftp://example.org/a.mp3", "Unsupported URI scheme"),
            ("file:///etc/passwd", "Unsupported URI scheme"),
            ("http://user:secret@example.org/a.mp3", "URLs with credentials are refused"),
            ("https://token@example.org/a.mp3", "URLs with credentials are refused"),
            ("http:///no-host.mp3", "Malformed URI"),
            ("http://exa mple.org/a.mp3", "Malformed URI"),
            ("http://example.org/\u{7f}", "Malformed URI"),
            ("http://example.org/" + String(repeating: "a", count: StreamURL.maximumLength), "URI too long"),
        ]
        for (uri, message) in refusals {
            #expect(throws: MPDError(.argument, message), "\(uri)") { try StreamURL.parse(uri) }
        }
    }
}

/// Remote `.m3u` and `.pls` bodies into stream URLs (`load URL`, `listplaylist URL`).
@Suite struct PlaylistDocumentTests {
    let base = URL(string: "http://radio.example/lists/station.m3u")!

    private func parse(_ text: String) throws -> PlaylistDocument {
        try PlaylistDocument.parse(Array(text.utf8), base: base)
    }

    @Test func m3uListsItsURLsAndSkipsCommentsAndBlankLines() throws {
        let document = try parse("#EXTM3U\r\n#EXTINF:-1,Station One\r\nhttp://a.example/one.mp3\r\n\r\n  https://b.example/two  \n")
        #expect(document.format == .m3u)
        #expect(document.entries.map(\.absoluteString) == ["http://a.example/one.mp3", "https://b.example/two"])
        #expect(document.skipped == 0)
    }

    @Test func relativeEntriesResolveAgainstThePlaylistNeverToFiles() throws {
        let document = try parse("live.mp3\n../other/stream\n/etc/passwd\n")
        #expect(document.entries.map(\.absoluteString) == [
            "http://radio.example/lists/live.mp3", "http://radio.example/other/stream", "http://radio.example/etc/passwd",
        ])
    }

    @Test func filesOtherSchemesAndCredentialsAreSkippedAndCounted() throws {
        let document = try parse("file:///etc/passwd\nftp://x.example/a.mp3\nhttp://u:p@x.example/a.mp3\nhttp://ok.example/\n")
        #expect(document.entries.map(\.absoluteString) == ["http://ok.example/"])
        #expect(document.skipped == 3)
    }

    @Test func plsListsItsFilesInNumberOrder() throws {
        let document = try parse("""
            [playlist]
            NumberOfEntries=3
            File2=http://two.example/
            Title2=Two
            file1 = http://one.example/
            File3=/local/file.mp3
            Length1=-1
            Version=2
            """)
        #expect(document.format == .pls)
        #expect(document.entries.map(\.absoluteString) == ["http://one.example/", "http://two.example/", "http://radio.example/local/file.mp3"])
    }

    @Test func aByteOrderMarkAndLatin1AreRead() throws {
        #expect(try PlaylistDocument.parse([0xEF, 0xBB, 0xBF] + Array("http://a.example/\n".utf8), base: base).entries.count == 1)
        // "http://a.example/caf\u{e9}" in Latin-1: percent-encoded by URLComponents.
        let latin1: [UInt8] = Array("http://a.example/caf".utf8) + [0xE9, 0x0A]
        #expect(try PlaylistDocument.parse(latin1, base: base).entries.count == 1)
    }

    @Test func htmlBinaryHLSAndEmptyBodiesAreNotPlaylists() {
        #expect(throws: PlaylistDocument.Problem(description: "not a playlist (HTML or XML)")) { try parse("<!DOCTYPE html><html>…") }
        #expect(throws: PlaylistDocument.Problem(description: "not a playlist (binary data)")) {
            try PlaylistDocument.parse([0xFF, 0xFB, 0x90, 0x00], base: base)
        }
        #expect(throws: PlaylistDocument.Problem(description: "an HLS playlist (not played)")) {
            try parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\nseg1.ts\n")
        }
        #expect(throws: PlaylistDocument.Problem(description: "empty playlist")) { try parse("\n \r\n") }
    }

    @Test func aHugePlaylistIsCutAtTheLimit() throws {
        let text = (0..<(PlaylistDocument.maximumEntries + 5)).map { "http://a.example/\($0)" }.joined(separator: "\n")
        let document = try parse(text)
        #expect(document.entries.count == PlaylistDocument.maximumEntries)
        #expect(document.skipped == 5)
    }
}

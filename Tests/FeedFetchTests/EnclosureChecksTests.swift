@testable import FeedFetch
import Foundation
import Testing

/// The downloader's checks that need no server: `Content-Range` and the sniffing of a body
/// that is a page, not audio.
@Suite struct EnclosureChecksTests {
    @Test func contentRangeIsReadStrictly() {
        #expect(ContentRange("bytes 1000-1999/2000") == ContentRange(start: 1000, end: 1999, total: 2000))
        #expect(ContentRange("bytes 0-0/*")?.total == nil)
        #expect(ContentRange("bytes 0-0/*")?.start == 0)
        for bad in ["bytes 10-5/100", "bytes 0-100/100", "bytes */100", "items 0-1/2", "bytes -5/10", "bytes 1-2/x", ""] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func anHTMLOrXMLBodyIsToldFromAudioByItsFirstBytes() {
        for page in ["<!DOCTYPE html><html>", "\u{FEFF}<!doctype HTML>", "\n  <html lang=en>", "<?xml version=\"1.0\"?><rss/>", "<HEAD><title>x"] {
            #expect(EnclosureDownloader.looksLikeText(Data(page.utf8)), "\(page)")
        }
        let mp3 = try! Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Media/01-morning-sine.mp3").standardized)
        #expect(!EnclosureDownloader.looksLikeText(mp3.prefix(4096)))
        #expect(!EnclosureDownloader.looksLikeText(Data("ID3\u{4}".utf8)))
        #expect(!EnclosureDownloader.looksLikeText(Data()))
    }
}

import Feeds
import Foundation
import Testing

/// The committed fixtures, each for one thing real feeds do.
@Suite struct FeedParsingTests {
    @Test func iTunesElementsAreMatchedByNamespaceURINotByPrefix() throws {
        let feed = try Fixture.parse("rss-itunes-other-prefix.xml").get()
        #expect(feed.title == "Prefix Radio", "the title's line break collapses to a space")
        try #require(feed.episodes.count == 2)
        let first = feed.episodes[0], second = feed.episodes[1]
        #expect(first.id == "prefix-radio-1")
        #expect(first.title == "First")
        #expect(first.duration == .seconds(3723), "apple:duration is iTunes's; itunes:duration (0:07) here is not")
        #expect(second.duration == nil, "itunes: is bound to another namespace in this feed")
        #expect(first.enclosure == Enclosure(url: URL(string: "https://cdn.example.com/first.mp3")!, length: 123_456, type: "audio/mpeg"))
        #expect(first.published == Date(timeIntervalSince1970: 1_033_563_600))
        #expect(second.published == Date(timeIntervalSince1970: 1_033_626_600), "+0200")
    }

    @Test func relativeEnclosureURLsResolveAgainstTheFeedURL() throws {
        let feed = try Fixture.parse("rss-itunes-other-prefix.xml").get()
        #expect(feed.episodes[1].enclosure.url.absoluteString == "https://feeds.example.com/rss-itunes-other-prefix/episodes/second.mp3")
    }

    @Test func atomEntriesWithEnclosureLinksAndXMLBase() throws {
        let feed = try Fixture.parse("atom.xml").get()
        #expect(feed.title == "Atom Hour")
        try #require(feed.episodes.count == 2)
        let one = feed.episodes[0], two = feed.episodes[1]
        #expect(one.id == "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a")
        #expect(one.title == "Atom One")
        #expect(one.enclosure.url.absoluteString == "https://atom.example.org/podcast/media/one.mp3", "the feed's xml:base")
        #expect(one.enclosure.length == 1337)
        #expect(one.published == Date(timeIntervalSince1970: 1_071_318_569), "published wins over updated")
        #expect(one.duration == .seconds(3723))
        #expect(two.enclosure.url.absoluteString == "https://other.example.net/files/two.mp3", "the entry's own xml:base")
        #expect(two.published == Date(timeIntervalSince1970: 1_071_393_605.25), "updated, with a fraction, when not published")
        #expect(feed.skippedItems == 1, "the entry without an enclosure")
    }

    /// `podcast:chapters` by the namespace's URI, an item's direct child only, in the JSON chapters
    /// format, http(s), resolved against the feed; the first one wins.
    @Test func podcastChaptersAreTheItemsOwnJSONChapters() throws {
        let feed = try Fixture.parse("podcast-chapters.xml").get()
        #expect(feed.episodes.map(\.chapters?.absoluteString) == [
            "https://feeds.example.com/media/one.json", nil, nil,
        ])
    }

    @Test func cdataSectionsAreText() throws {
        let feed = try Fixture.parse("cdata.xml").get()
        #expect(feed.title == "Tom & Jerry's <Show>")
        #expect(feed.episodes.first?.title == "Episode <1>: \"R&D\" & more")
        #expect(feed.episodes.first?.id == "cdata-guid-1")
        #expect(feed.episodes.first?.enclosure.url.absoluteString == "http://media.example.com/a&b.mp3")
    }

    @Test func aStrayAmpersandFailsWithWhereAndWhy() throws {
        let result = try Fixture.parse("stray-ampersand.xml")
        guard case .failure(.malformed(let line, let column, let reason)) = result else {
            Issue.record("expected a malformed-XML failure, got \(result)")
            return
        }
        #expect(line == 4)
        #expect(column == 18, "just past the '&' of `    <title>Rock & Roll`")
        #expect(reason.contains("stray '&'"))
        #expect(FeedError.malformed(line: line, column: column, reason: reason).description.contains("line 4, column 18"))
    }

    @Test func anHTMLPageIsNotAFeed() throws {
        #expect(try Fixture.parse("html-page.html") == .failure(.htmlPage))
        #expect(FeedError.htmlPage.description.contains("HTML page"))
    }

    @Test func withoutGUIDsTheEnclosureURLIsTheIdentity() throws {
        let feed = try Fixture.parse("no-guids.xml").get()
        #expect(feed.episodes.map(\.id) == ["https://example.com/one.mp3", "https://feeds.example.com/two.mp3"])
        #expect(feed.episodes.map(\.title) == ["One", "Two"], "the second item with one.mp3 is the same episode")
        #expect(feed.skippedItems == 3, "the repeated file, the file: URL, the item without an enclosure")
    }

    @Test func anEnclosureThatIsNotHTTPIsRefused() throws {
        let feed = try Fixture.parse("no-guids.xml").get()
        #expect(!feed.episodes.contains { $0.enclosure.url.isFileURL })
    }

    @Test func aWellFormedDocumentThatIsNotAFeed() {
        let body = Data("<?xml version=\"1.0\"?><opml version=\"2.0\"><body/></opml>".utf8)
        #expect(throws: FeedError.notAFeed(rootElement: "opml")) {
            try FeedParser().parse(body, from: URL(string: "https://example.com/feed")!)
        }
    }

    @Test func plainTextIsNotXML() {
        let body = Data("Service Unavailable".utf8)
        #expect(throws: FeedError.malformed(line: 1, column: 1, reason: "no XML element where the document should start ('<' expected)")) {
            try FeedParser().parse(body, from: URL(string: "https://example.com/feed")!)
        }
    }

    /// Character references and the five predefined entities are text, not declared
    /// entities: refusing internal subsets must not cost a title its apostrophes.
    @Test func characterReferencesAndPredefinedEntitiesAreText() throws {
        let body = Data("""
            <rss><channel><title>It&#8217;s &lt;Q&amp;A&gt; &quot;live&quot; &apos;24 &#xE9;t&#xe9;</title></channel></rss>
            """.utf8)
        #expect(try FeedParser().parse(body, from: URL(string: "https://example.com/feed")!).title == "It\u{2019}s <Q&A> \"live\" '24 \u{E9}t\u{E9}")
    }

    @Test func anUndeclaredPrefixIsToleratedAndMatchesNothing() throws {
        let body = Data("""
            <rss><channel><title>T</title><item><guid>g</guid><enclosure url="https://e.com/a.mp3"/>\
            <itunes:duration>1:00</itunes:duration></item></channel></rss>
            """.utf8)
        let feed = try FeedParser().parse(body, from: URL(string: "https://example.com/feed")!)
        #expect(feed.episodes.count == 1)
        #expect(feed.episodes.first?.duration == nil)
    }
}

import Feeds
import Foundation
import Testing

/// RFC 822 and RFC 3339 dates, as feeds write them.
@Suite struct FeedDateTests {
    @Test(arguments: [
        ("Wed, 02 Oct 2002 13:00:00 GMT", 1_033_563_600.0),
        ("Wed, 02 Oct 2002 13:00:00 +0000", 1_033_563_600),
        ("Wed,02 Oct 2002 13:00:00 UT", 1_033_563_600),
        ("2 Oct 2002 13:00 Z", 1_033_563_600),
        ("wednesday, 02 october 2002 13:00:00 GMT", 1_033_563_600),
        ("Wed, 02 Oct 02 13:00:00 GMT", 1_033_563_600),
        ("Wed, 02 Oct 2002 13:00:00 EST", 1_033_581_600),
        ("Wed, 02 Oct 2002 13:00:00 -0500", 1_033_581_600),
        ("Wed, 02 Oct 2002 13:00:00 -05:00", 1_033_581_600),
        ("Thu, 03 Oct 2002 08:30:00 +0200", 1_033_626_600),
        ("Thu, 29 Feb 2024 23:59:00 GMT", 1_709_251_140),
        ("Fri, 31 Dec 1999 23:59:59 PST", 946_713_599),
        ("  Sun, 04 Jul 2021 00:00:00 GMT \n", 1_625_356_800),
        ("Sun, 04 Jul 2021 00:00:00", 1_625_356_800),
    ])
    func rfc822(_ text: String, _ seconds: Double) {
        #expect(FeedDate.parse(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: [
        ("2002-10-02T13:00:00Z", 1_033_563_600.0),
        ("2002-10-02t13:00:00z", 1_033_563_600),
        ("2002-10-02 13:00:00Z", 1_033_563_600),
        ("2003-12-13T08:29:29-04:00", 1_071_318_569),
        ("2003-12-14T10:20:05.25+01:00", 1_071_393_605.25),
        ("2021-07-04", 1_625_356_800),
    ])
    func rfc3339(_ text: String, _ seconds: Double) {
        #expect(FeedDate.rfc3339(text) == Date(timeIntervalSince1970: seconds))
        #expect(FeedDate.parse(text) == Date(timeIntervalSince1970: seconds), "an ISO date in pubDate")
    }

    @Test(arguments: [
        "", "yesterday", "Wed, 30 Feb 2002 13:00:00 GMT", "Wed, 29 Feb 2023 13:00:00 GMT", "Wed, 32 Oct 2002 13:00:00 GMT",
        "Wed, 02 Foo 2002 13:00:00 GMT", "Wed, 02 Oct 2002 24:00:00 GMT", "Wed, 02 Oct 2002 13:60:00 GMT",
        "Wed, 02 Oct 2002 13:00:00 +2500", "Wed, 02 Oct 2002 13:00:00 Mars", "Wed, 02 Oct 2002", "02 Oct 2002 13:00:00 GMT extra",
        "2002-10-02T13:00:00", "2002-10-02T13:00:00+0100", "2002-13-02T13:00:00Z", "2002-10-02T13:00:00.Z", "２００２-10-02",
    ])
    func unreadableDatesAreNil(_ text: String) {
        #expect(FeedDate.parse(text) == nil)
    }
}

@testable import FeedFetch
import Foundation
import Testing

/// The silent push's payload, as `mpc sendmessage queueplayerd TEXT` delivers it.
@Suite struct RemoteNotificationTests {
    @Test func contentAvailableFetchesEveryFeedOrTheOneNamed() {
        #expect(RemoteNotification(message: #"{"aps":{"content-available":1}}"#) == .fetch(feed: nil))
        #expect(RemoteNotification(message: #"{"aps":{"content-available":1,"sound":""},"feed":"https://x.test/a.xml","other":[1,2]}"#)
                == .fetch(feed: URL(string: "https://x.test/a.xml")!))
    }

    @Test func aPayloadWithoutContentAvailableIsIgnoredWithAReason() {
        #expect(RemoteNotification(message: #"{"aps":{"alert":"hi"}}"#) == .ignored(#"no "content-available": 1 in "aps""#))
        #expect(RemoteNotification(message: #"{"aps":{"content-available":0}}"#) == .ignored(#"no "content-available": 1 in "aps""#))
        #expect(RemoteNotification(message: #"{"feed":"https://x.test/a.xml"}"#) == .ignored(#"no "aps" dictionary"#))
    }

    @Test func malformedPayloadsSayWhatIsWrong() {
        #expect(RemoteNotification(message: "hello") == .malformed("not JSON"))
        #expect(RemoteNotification(message: #"{"aps":{"content-available":1}"#) == .malformed("not JSON"))
        #expect(RemoteNotification(message: #"{"aps":{"content-available":"yes"}}"#) == .malformed("aps.content-available: expected a number"))
        #expect(RemoteNotification(message: #"{"aps":1}"#) == .malformed("aps: expected an object"))
        #expect(RemoteNotification(message: #"{"aps":{"content-available":1},"feed":"file:///etc/passwd"}"#)
                == .malformed(#""feed": not an http or https URL: file:///etc/passwd"#))
        #expect(RemoteNotification(message: "[]") != .fetch(feed: nil))
    }
}

/// The subscriptions file and `Retry-After`.
@Suite struct SubscriptionListTests {
    @Test func oneURLALineWithCommentsAndBlankLinesAndEachBadLineNamed() {
        let list = FeedSubscriptionList(parsing: """
            # my podcasts
            https://a.test/feed.xml

              http://b.test/rss   \r
            not a url at all
            ftp://c.test/feed
            https://a.test/feed.xml
            """)
        #expect(list.urls.map(\.absoluteString) == ["https://a.test/feed.xml", "http://b.test/rss"])
        #expect(list.problems == ["line 5: not a URL: not a url at all", "line 6: not an http or https URL: ftp://c.test/feed"])
    }

    @Test func aMissingFileIsNoSubscriptionsAndTheDefaultPlaceFollowsXDG() throws {
        let list = FeedSubscriptionList(contentsOf: URL(fileURLWithPath: "/nonexistent/queueplayerd/feeds"))
        #expect(list.urls.isEmpty && list.problems.isEmpty)
        #expect(FeedSubscriptionList.defaultFile(environment: ["XDG_CONFIG_HOME": "/cfg"]).path == "/cfg/queueplayerd/feeds")
        #expect(FeedSubscriptionList.defaultFile(environment: ["XDG_CONFIG_HOME": "relative"]).path.hasSuffix("/.config/queueplayerd/feeds"))
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_000_000_000)
        #expect(RetryAfter.seconds("5", now: now) == 5)
        #expect(RetryAfter.seconds(" 120 ", now: now) == 120)
        #expect(RetryAfter.seconds("Sun, 09 Sep 2001 01:47:00 GMT", now: now) == 20)
        #expect(RetryAfter.seconds("Sun, 09 Sep 2001 01:00:00 GMT", now: now) == 0, "a date in the past: at once")
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
    }
}

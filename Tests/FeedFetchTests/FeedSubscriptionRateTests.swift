import FeedFetch
import Foundation
import Testing

/// A subscription's optional playback rate: `URL rate=R` in the feeds file (and `--feed`).
@Suite struct FeedSubscriptionRateTests {
    @Test func aLineMayCarryARateAndABadOneIsSkippedWithItsNumber() throws {
        let show = try #require(URL(string: "https://example.com/show.xml"))
        let list = FeedSubscriptionList(parsing: "https://example.com/show.xml\trate=2.5\nhttps://example.com/b.xml\nhttps://example.com/c.xml rate=0\n")
        #expect(list.urls.map(\.absoluteString) == ["https://example.com/show.xml", "https://example.com/b.xml"])
        #expect(list.rates == [show: 2.5])
        #expect(list.problems.count == 1 && list.problems[0].hasPrefix("line 3:") && list.problems[0].contains("0.5 to 3.0"),
                "\(list.problems)")
        for bad in ["https://example.com/a.xml rate=9", "https://example.com/a.xml speed=2", "https://example.com/a.xml rate=1 x",
                    "https://example.com/a.xml rate=abc"] {
            guard case .failure = FeedSubscriptionList.subscription(bad) else {
                Issue.record("\(bad) was taken")
                continue
            }
        }
        guard case .success(let (url, rate)) = FeedSubscriptionList.subscription("https://example.com/show.xml rate=0.5") else {
            Issue.record("the lowest rate was refused")
            return
        }
        #expect(url == show && rate == 0.5)
    }
}

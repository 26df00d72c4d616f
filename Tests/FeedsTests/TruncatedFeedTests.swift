import Feeds
import Foundation
import Testing

/// A body cut short (a dropped connection, a proxy's limit) is an error, never a smaller
/// feed: otherwise a refresh would see the episodes after the cut as gone, and the parser
/// would be trusting whatever prefix arrived.
@Suite struct TruncatedFeedTests {
    @Test(arguments: ["rss-itunes-other-prefix.xml", "atom.xml", "cdata.xml", "no-guids.xml", "changed-enclosure-after.xml"])
    func everyPrefixThatCutsTheRootElementFails(_ name: String) throws {
        let body = try Fixture.data(name)
        let rootEnd = try #require(body.lastIndex(of: UInt8(ascii: ">")))
        #expect(throws: Never.self) { try FeedParser().parse(body, from: Fixture.url(name)) }
        for length in stride(from: 0, through: rootEnd, by: 3) {
            let prefix = body.prefix(length)
            let result = Result { () throws(FeedError) -> Feed in try FeedParser().parse(prefix, from: Fixture.url(name)) }
            guard case .failure = result else {
                Issue.record("\(name) cut after \(length) of \(body.count) bytes was read as \(result)")
                return
            }
        }
    }
}

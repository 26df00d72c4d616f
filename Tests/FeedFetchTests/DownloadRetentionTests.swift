import FeedFetch
import Testing

/// `--download-limit`: what may be deleted, and what never is.
@Suite struct DownloadRetentionTests {
    static let feed = "http://a.test/feed.xml"
    static let other = "http://b.test/feed.xml"

    @Test func theOldestPlayedBeyondTheLimitGoNeverUnplayedOnesNorTheCurrentOne() {
        var retention = DownloadRetention()
        for path in ["a/1.mp3", "a/2.mp3", "a/3.mp3", "a/4.mp3"] { retention.downloaded(path, feed: Self.feed) }
        #expect(retention.surplus(limit: 2, current: nil).isEmpty, "nothing played: nothing goes, whatever the count")
        retention.played("a/1.mp3")
        retention.played("a/3.mp3")
        #expect(retention.surplus(limit: 2, current: nil) == ["a/1.mp3", "a/3.mp3"])
        #expect(retention.surplus(limit: 3, current: nil) == ["a/1.mp3"], "only as many as are over the limit, oldest first")
        #expect(retention.surplus(limit: 2, current: "a/1.mp3") == ["a/3.mp3"], "never the one playing")
        retention.removed("a/1.mp3")
        #expect(retention.downloads[Self.feed] == ["a/2.mp3", "a/3.mp3", "a/4.mp3"])
        #expect(retention.surplus(limit: 2, current: nil) == ["a/3.mp3"])
    }

    @Test func eachFeedHasItsOwnLimitAndAFileNotDownloadedIsNotTracked() {
        var retention = DownloadRetention()
        retention.downloaded("a/1.mp3", feed: Self.feed)
        retention.downloaded("b/1.mp3", feed: Self.other)
        retention.downloaded("b/2.mp3", feed: Self.other)
        let (a, b, song) = (retention.played("a/1.mp3"), retention.played("b/1.mp3"), retention.played("Music/song.mp3"))
        #expect(a && b)
        #expect(!song, "not a download")
        #expect(retention.surplus(limit: 1, current: nil) == ["b/1.mp3"])
        #expect(retention.surplus(limit: 0, current: nil) == ["a/1.mp3", "b/1.mp3"])
    }
}

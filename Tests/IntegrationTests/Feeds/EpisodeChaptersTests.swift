import Foundation
import TestSupport
import Testing

/// An episode's `podcast:chapters` file, fetched from a real nginx by the background
/// downloads along with the audio, kept beside it (`<episode>.chapters.json`) and given as
/// the song's chapters; a chapters file over 1 MiB is refused and the episode kept.
@Suite(.serialized) struct EpisodeChaptersTests {
    static let destination = "Podcasts/Loopback Radio/Episode One.mp3"
    static let sidecar = "Podcasts/Loopback Radio/Episode One.chapters.json"

    static func feed() -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Loopback Radio</title>
              <item><title>Episode One</title><guid>lr-ep-1</guid><enclosure url="/media/episode.mp3" type="audio/mpeg"/>
                <podcast:chapters url="/media/chapters.json" type="application/json+chapters"/></item>
            </channel></rss>
            """.utf8)
    }

    static let chapters = Data("""
        {"version": "1.2.0", "chapters": [{"startTime": 0, "title": "Welcome"},
          {"startTime": 5, "title": "The news", "url": "https://example.com/news"}]}
        """.utf8)

    @Test func theChaptersFileIsFetchedWithTheEpisodeAndListed() throws {
        let nginx = try NginxServer(locations: "")
        try nginx.serve("feed.xml", Self.feed())
        try nginx.serve("media/episode.mp3", try Data(contentsOf: TestMedia.all[0]))
        try nginx.serve("media/chapters.json", Self.chapters)
        let setup = try BackgroundTransferTests.Setup(feed: nginx.url("feed.xml"))
        defer { setup.remove() }
        let daemon = try setup.daemon()
        let sidecar = setup.music.appendingPathComponent(Self.sidecar)
        #expect(waitUntil(timeout: 30) { FileManager.default.fileExists(atPath: sidecar.path) }, "\(daemon.process.standardError)")
        #expect(try Data(contentsOf: sidecar) == Self.chapters)
        let client = try daemon.client()
        #expect(try client.request("chapters \"\(Self.destination)\"") == [
            "chapter: 1", "start: 0.000", "end: 5.000", "title: Welcome",
            "chapter: 2", "start: 5.000", "end: 18.125", "title: The news", "url: https://example.com/news", "OK",
        ])
        #expect(nginx.requests(for: "media/chapters.json").count == 1)
    }

    @Test func aChaptersFileOverOneMebibyteIsNotKept() throws {
        let nginx = try NginxServer(locations: "")
        try nginx.serve("feed.xml", Self.feed())
        try nginx.serve("media/episode.mp3", try Data(contentsOf: TestMedia.all[0]))
        try nginx.serve("media/chapters.json", Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1))
        let setup = try BackgroundTransferTests.Setup(feed: nginx.url("feed.xml"))
        defer { setup.remove() }
        let daemon = try setup.daemon()
        #expect(daemon.waitForStandardError(timeout: 30) { $0.contains("is larger than 1048576 bytes; not kept") },
                "\(daemon.process.standardError)")
        #expect(FileManager.default.fileExists(atPath: setup.file.path))
        #expect(!FileManager.default.fileExists(atPath: setup.music.appendingPathComponent(Self.sidecar).path))
    }
}

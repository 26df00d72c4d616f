import Feeds
import Foundation

/// The committed feeds in `Fixtures/`, read beside this file (no bundle needed), and parsed
/// as if fetched from `https://feeds.example.com/<name>/feed.xml`.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func url(_ name: String) -> URL {
        URL(string: "https://feeds.example.com/\(name.split(separator: ".")[0])/feed.xml")!
    }

    static func parse(_ name: String) throws -> Result<Feed, FeedError> {
        let body = try data(name)
        return Result { () throws(FeedError) -> Feed in try FeedParser().parse(body, from: url(name)) }
    }
}

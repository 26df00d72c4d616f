import Feeds
import Foundation
import Testing

/// Titles into file names that stay inside `Podcasts/`, for named nasty titles and for
/// thousands of generated ones.
@Suite struct PodcastFileNameTests {
    @Test(arguments: [
        ("../../x", "_.._x"), ("AC/DC", "AC_DC"), ("..", "Episode"), (".", "Episode"), ("", "Episode"), ("...", "Episode"),
        (".hidden", "hidden"), ("/etc/passwd", "_etc_passwd"), ("a\u{0}b", "a b"), ("  Hello\n\tWorld  ", "Hello World"),
        ("\u{1B}[31mred\u{1B}[0m", "[31mred [0m"), ("abc\u{202E}3pm.exe", "abc3pm.exe"), ("e\u{301}te\u{301}", "\u{E9}t\u{E9}"),
        ("C:\\Windows", "C:_Windows"), ("trailing dots...", "trailing dots"),
    ])
    func namedTitles(_ title: String, _ expected: String) {
        #expect(PodcastFileName.component(title, fallback: "Episode") == expected)
    }

    @Test func longTitlesAreCutAtACharacterWithinTheByteLimit() {
        let accents = PodcastFileName.component(String(repeating: "é", count: 300), fallback: "x")
        #expect(accents == String(repeating: "é", count: 100))
        let families = PodcastFileName.component(String(repeating: "👨‍👩‍👧", count: 30), fallback: "x")
        #expect(families == String(repeating: "👨‍👩‍👧", count: 11), "18 bytes each, never split")
        let zalgo = PodcastFileName.component("a" + String(repeating: "\u{301}", count: 1000), fallback: "x")
        #expect(zalgo.utf8.count <= PodcastFileName.maximumComponentBytes && zalgo.unicodeScalars.first == "\u{E1}", "one huge character (á, in NFC, and 999 more accents): cut by scalars")
    }

    @Test func thePathIsPodcastsFeedEpisode() {
        #expect(PodcastFileName.relativePath(feedTitle: "My Show", episodeTitle: "Ep. 1: Start") == "Podcasts/My Show/Ep. 1: Start.mp3")
        #expect(PodcastFileName.relativePath(feedTitle: nil, episodeTitle: nil) == "Podcasts/Podcast/Episode.mp3")
        #expect(PodcastFileName.relativePath(feedTitle: "a", episodeTitle: "b", fileExtension: "../sh") == "Podcasts/a/b.mp3")
        #expect(PodcastFileName.relativePath(feedTitle: "a", episodeTitle: "b", fileExtension: "M4A") == "Podcasts/a/b.m4a")
    }

    static let pieces = ["..", ".", "/", "\\", "\u{0}", "\u{1}", "\u{1B}[2J", "\n", "\r", "\t", " ", "a", "Z", "é", "e\u{301}",
                         "👨‍👩‍👧", "\u{202E}", "\u{7F}", "\u{85}", "\u{2028}", "\u{A0}", "~", "-", "$HOME", "%2e%2e%2f", "ｆ", "\u{FEFF}",
                         "\u{DB}", String(repeating: "x", count: 250), String(repeating: "ü", count: 120)]

    /// Every title of up to three pieces (27 931 of them), each as an episode title under a
    /// feed title of the pieces in another order: exhaustive rather than random, so a
    /// failure names its input and reproduces.
    @Test func generatedTitlesStayInsidePodcasts() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-names-\(UUID().uuidString)")
        let podcasts = music.appendingPathComponent(PodcastFileName.directory)
        defer { try? FileManager.default.removeItem(at: music) }
        let count = Self.pieces.count
        let titles: [[Int]] = [[]] + (0 ..< count).map { [$0] } + (0 ..< count * count).map { [$0 / count, $0 % count] }
            + (0 ..< count * count * count).map { [$0 / (count * count), $0 / count % count, $0 % count] }
        for (round, episodeTitle) in titles.enumerated() {
            let feedTitle = episodeTitle.reversed().map { Self.pieces[$0] }.joined()
            let path = PodcastFileName.relativePath(feedTitle: feedTitle, episodeTitle: episodeTitle.map { Self.pieces[$0] }.joined())
            let components = path.split(separator: "/", omittingEmptySubsequences: false)
            try #require(components.count == 3 && components[0] == "Podcasts", "\(path.debugDescription)")
            for component in components.dropFirst() {
                #expect(!component.isEmpty && component != "." && component != ".." && !component.hasPrefix("."), "\(path.debugDescription)")
                #expect(component.utf8.count <= 255, "\(path.debugDescription)")
                #expect(!component.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(path.debugDescription)")
            }
            let resolved = music.appendingPathComponent(path).standardizedFileURL.path
            #expect(resolved.hasPrefix(podcasts.path + "/"), "\(path.debugDescription) resolves to \(resolved)")
            // The file system agrees: write a sample of them for real.
            if round % 50 == 0 {
                let file = music.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data().write(to: file)
            }
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: music.path)
        #expect(written == [PodcastFileName.directory], "nothing outside Podcasts/")
    }
}

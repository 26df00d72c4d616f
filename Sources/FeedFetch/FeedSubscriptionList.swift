import Foundation
import QueuePlayer

/// The subscriptions file, `$XDG_CONFIG_HOME/queueplayerd/feeds`: one feed URL a line, which
/// may be followed by `rate=R` (the playback rate of its episodes, from 0.5 to 3.0), blank lines
/// and `#` comments ignored.
///
/// A line that is not an http(s) URL is reported with its number and skipped, and the
/// other lines still count: one typo must not unsubscribe every feed.
public struct FeedSubscriptionList: Sendable, Equatable {
    /// The feeds, in the order of the file, each once.
    public var urls: [URL]
    /// The playback rate of each feed that has one (`URL rate=R`).
    public var rates: [URL: Double]
    /// One message per line that was skipped: `line N: why`.
    public var problems: [String]

    /// The file's default place: `$XDG_CONFIG_HOME/queueplayerd/feeds`, else `~/.config/queueplayerd/feeds`
    /// (``UserDirectories``: `~` is `$HOME`).
    public static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        UserDirectories.configHome(environment: environment).appendingPathComponent("queueplayerd/feeds")
    }

    /// Reads `text` as the file's contents.
    public init(parsing text: String) {
        var urls: [URL] = []
        var rates: [URL: Double] = [:]
        var problems: [String] = []
        // By scalars: "\r\n" (a file written on Windows) is one Character, which a Character split misses.
        for (index, rawLine) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(String.UnicodeScalarView(rawLine)).trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            switch Self.subscription(line) {
            case .success(let (url, rate)):
                if !urls.contains(url) { urls.append(url) }
                if let rate { rates[url] = rate }
            case .failure(let problem): problems.append("line \(index + 1): \(problem.description)")
            }
        }
        self.urls = urls
        self.rates = rates
        self.problems = problems
    }

    /// Reads the file at `file`; a missing file is an empty list, an unreadable one a problem.
    public init(contentsOf file: URL) {
        do {
            let data = try Data(contentsOf: file)
            guard let text = String(data: data, encoding: .utf8) else {
                self.init(parsing: "")
                problems = ["not UTF-8 text"]
                return
            }
            self.init(parsing: text)
        } catch CocoaError.fileReadNoSuchFile {
            self.init(parsing: "")
        } catch {
            self.init(parsing: "")
            problems = ["cannot read it: \(error.localizedDescription)"]
        }
    }

    /// A subscription: a feed URL (``feedURL(_:)``), then, after blanks, `rate=R` or nothing.
    public static func subscription(_ text: String) -> Result<(url: URL, rate: Double?), FeedURLProblem> {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first else { return .failure(FeedURLProblem(description: "not a URL: \(text)")) }
        let url: URL
        switch feedURL(first) {
        case .success(let parsed): url = parsed
        case .failure(let problem):
            // Named as a whole: `not a URL: not a url at all`, not its first word.
            if case .failure(let whole) = feedURL(text) { return .failure(whole) }
            return .failure(problem)
        }
        guard words.count > 1 else { return .success((url, nil)) }
        let range = Double(QueuePlayer.supportedRates.lowerBound)...Double(QueuePlayer.supportedRates.upperBound)
        guard words.count == 2, words[1].hasPrefix("rate="), let rate = Double(words[1].dropFirst(5)), range.contains(rate) else {
            return .failure(FeedURLProblem(description: "after the URL only rate=R, R from \(range.lowerBound) to \(range.upperBound): \(text)"))
        }
        return .success((url, rate))
    }

    /// `text` as a feed URL: absolute, http or https, with a host.
    public static func feedURL(_ text: String) -> Result<URL, FeedURLProblem> {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            return .failure(FeedURLProblem(description: "not a URL: \(text)"))
        }
        guard scheme == "http" || scheme == "https" else {
            return .failure(FeedURLProblem(description: "not an http or https URL: \(text)"))
        }
        guard let host = url.host, !host.isEmpty else {
            return .failure(FeedURLProblem(description: "no host in \(text)"))
        }
        return .success(url)
    }
}

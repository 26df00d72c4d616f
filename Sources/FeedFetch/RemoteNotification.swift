#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A silent push: an MPD message on the channel `queueplayerd` whose text is APNs-shaped
/// JSON, `{"aps":{"content-available":1}}`, with an optional `"feed":"URL"` naming the one
/// feed to fetch.
///
/// Anyone who can reach the control socket can send one, so the text is untrusted: it is
/// decoded with `JSONDecoder` into exactly the fields used, and anything else (not JSON, the
/// wrong types, no `content-available`) changes nothing and says why.
public enum RemoteNotification: Equatable, Sendable {
    /// The channel the daemon itself listens on.
    public static let channel = "queueplayerd"

    /// Fetch now: the feed named, or every feed when nil.
    case fetch(feed: URL?)
    /// A well-formed payload that asks for no fetch (no `content-available: 1`), with why.
    case ignored(String)
    /// Not a payload the daemon understands (malformed JSON, wrong types, a bad feed URL).
    case malformed(String)

    private struct Payload: Decodable {
        struct APS: Decodable {
            var contentAvailable: Int?

            enum CodingKeys: String, CodingKey {
                case contentAvailable = "content-available"
            }
        }

        var aps: APS?
        var feed: String?
    }

    /// Reads a message's text.
    public init(message text: String) {
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            self = .malformed(Self.describe(error))
            return
        } catch {
            self = .malformed("\(error)")
            return
        }
        guard payload.aps?.contentAvailable == 1 else {
            self = .ignored(payload.aps == nil ? "no \"aps\" dictionary" : "no \"content-available\": 1 in \"aps\"")
            return
        }
        guard let feed = payload.feed else {
            self = .fetch(feed: nil)
            return
        }
        switch FeedSubscriptionList.feedURL(feed) {
        case .success(let url): self = .fetch(feed: url)
        case .failure(let problem): self = .malformed("\"feed\": \(problem.description)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            "not JSON"
        case .dataCorrupted(let context), .keyNotFound(_, let context), .valueNotFound(_, let context):
            "\(path(context)): \(context.debugDescription)"
        case .typeMismatch(let type, let context):
            "\(path(context)): expected \(type == Int.self ? "a number" : type == String.self ? "a string" : "an object")"
        @unknown default:
            "\(error)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.isEmpty ? "the payload" : context.codingPath.map(\.stringValue).joined(separator: ".")
    }
}

import Feeds
import Foundation

/// The value of a `Retry-After` header (RFC 9110 §10.2.3) as seconds from `now`: a number of
/// seconds, or an HTTP date. Nil for anything else: an unreadable header is as if absent.
enum RetryAfter {
    static func seconds(_ value: String, now: Date) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return Double(text).map { min($0, 1e9) }
        }
        // The IMF-fixdate form is RFC 822's, which the feeds' dates already use.
        guard let date = FeedDate.rfc822(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

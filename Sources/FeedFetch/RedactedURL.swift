import Foundation

/// A URL as a log line may show it: without the password of its user information
/// (`https://user:***@host/...`), or, with a user name alone (often a token), without that
/// (`https://***@host/...`). Enclosure and feed URLs come from feeds and subscriptions, and
/// private feeds carry their credentials in them; the journal needs them, the log must not.
enum RedactedURL {
    static func text(_ url: URL) -> String { text(url.absoluteString) }

    static func text(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let authorityStart = scheme.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return url }
        let userInformation = url[authorityStart..<at]
        let shown = userInformation.firstIndex(of: ":").map { "\(userInformation[..<$0]):***" } ?? "***"
        return String(url[..<authorityStart]) + shown + String(url[at...])
    }
}

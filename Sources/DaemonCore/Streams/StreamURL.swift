import Foundation
import MPDProtocol

/// A URI a client gives to `add`, `addid` or `load` that names a network resource: the check
/// that decides, before anything is fetched, whether the daemon will play it.
///
/// Only `http://` and `https://` with a host are taken (what `urlhandlers` lists). A URL with
/// user information (`http://user:secret@host/`) is refused rather than played: it would be
/// shown to every client by `playlistinfo` and `currentsong`, kept in the saved state and
/// logged. Pure: no I/O, so every rule is tested directly (`DaemonTests/StreamURLTests`).
package enum StreamURL {
    /// The schemes played, as `urlhandlers` lists them.
    static let schemes = ["http", "https"]
    /// Longer URIs are refused (a queue entry is shown in every song block).
    static let maximumLength = 4096

    /// Whether `uri` looks like a URL rather than a path in the music directory: it starts
    /// with a scheme and `://` (as MPD's `uri_has_scheme`).
    package static func hasScheme(_ uri: String) -> Bool {
        guard let separator = uri.range(of: "://") else { return false }
        let scheme = uri[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The URL to play for `uri`, or the error `add` answers with.
    package static func parse(_ uri: String) throws(MPDError) -> URL {
        guard hasScheme(uri) else { throw MPDError(.argument, "Malformed URI") }
        let scheme = uri[..<uri.range(of: "://")!.lowerBound].lowercased()
        guard schemes.contains(scheme) else { throw MPDError(.argument, "Unsupported URI scheme") }
        guard uri.utf8.count <= maximumLength else { throw MPDError(.argument, "URI too long") }
        guard !uri.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false }),
              let components = URLComponents(string: uri), let host = components.host, !host.isEmpty,
              let url = components.url
        else { throw MPDError(.argument, "Malformed URI") }
        guard components.user == nil, components.password == nil else {
            throw MPDError(.argument, "URLs with credentials are refused")
        }
        return url
    }

    /// Whether `url` is one the daemon plays over the network (not a file).
    static func isNetwork(_ url: URL) -> Bool {
        url.scheme.map { schemes.contains($0.lowercased()) } ?? false
    }
}

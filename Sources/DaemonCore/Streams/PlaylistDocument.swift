import Foundation

/// A remote playlist's body (`.m3u` or `.pls`, what radio directories hand out) read into the
/// stream URLs it lists: untrusted input, parsed by a pure function (`PlaylistDocumentTests`).
///
/// Only `http://` and `https://` entries are kept, relative ones resolved against the
/// playlist's own URL: a playlist from the network must not queue the daemon's files
/// (`/etc/passwd`, `file:///`), other schemes, or URLs with credentials (``StreamURL``).
/// Those are counted in ``skipped``. Extended M3U's `#EXTINF` titles and PLS's `TitleN` are
/// not kept: a stream names itself (`icy-name`) once it plays. HTML (a portal's error page),
/// binary data, and HLS (`#EXT-X-`: segments, not a stream) are not playlists.
struct PlaylistDocument: Equatable {
    /// The most entries kept; a longer playlist is cut there.
    static let maximumEntries = 1000

    enum Format: Equatable { case m3u, pls }

    let format: Format
    /// The stream URLs, in the playlist's order.
    let entries: [URL]
    /// Entries left out: not HTTP(S), with credentials, malformed, or beyond ``maximumEntries``.
    let skipped: Int

    /// Why a body is not a playlist.
    struct Problem: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// Parses `body`, fetched from `base`.
    static func parse(_ body: [UInt8], base: URL) throws(Problem) -> PlaylistDocument {
        guard !body.contains(0) else { throw Problem(description: "not a playlist (binary data)") }
        // UTF-8 (with or without a byte-order mark), else Latin-1: old M3U files are in the latter.
        var bytes = body[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard let first = lines.first else { throw Problem(description: "empty playlist") }
        if first.hasPrefix("<") { throw Problem(description: "not a playlist (HTML or XML)") }
        if first.lowercased() == "[playlist]" {
            return collect(format: .pls, candidates: plsEntries(lines.dropFirst()), base: base)
        }
        if lines.contains(where: { $0.hasPrefix("#EXT-X-") }) {
            throw Problem(description: "an HLS playlist (not played)")
        }
        return collect(format: .m3u, candidates: lines.filter { !$0.hasPrefix("#") }, base: base)
    }

    /// `FileN=` values in the order of N (then of appearance).
    private static func plsEntries(_ lines: ArraySlice<String>) -> [String] {
        var files: [(number: Int, order: Int, value: String)] = []
        for (order, line) in lines.enumerated() {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            guard key.hasPrefix("file"), let number = Int(key.dropFirst(4)) else { continue }
            files.append((number, order, line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
        return files.sorted { ($0.number, $0.order) < ($1.number, $1.order) }.map(\.value)
    }

    private static func collect(format: Format, candidates: [String], base: URL) -> PlaylistDocument {
        var entries: [URL] = []
        var skipped = 0
        for candidate in candidates {
            guard entries.count < maximumEntries, let url = resolve(candidate, base: base) else {
                skipped += 1
                continue
            }
            entries.append(url)
        }
        return PlaylistDocument(format: format, entries: entries, skipped: skipped)
    }

    /// An entry as a stream URL: absolute, or relative to the playlist (never a file path).
    private static func resolve(_ entry: String, base: URL) -> URL? {
        // A relative entry (even `/etc/passwd`) resolves on the playlist's server, never to a file.
        let absolute = StreamURL.hasScheme(entry) ? entry : URL(string: entry, relativeTo: base)?.absoluteString
        return absolute.flatMap { try? StreamURL.parse($0) }
    }
}

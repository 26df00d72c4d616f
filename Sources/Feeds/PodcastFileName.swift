import Foundation

/// Where a downloaded episode goes in the music directory, `Podcasts/<feed title>/<episode
/// title>.mp3`, with titles made into names that cannot leave `Podcasts/`.
///
/// Titles are untrusted text: `../../x`, `/etc/passwd`, NUL, line breaks, terminal escape
/// sequences, right-to-left overrides that make `3pm.exe` read as `exe.mp3`, 10 000 bytes.
/// Each title becomes one path component that is never empty, `.` or `..`, never starts
/// with a dot (no hidden files), has no separator, NUL or control character, is in NFC (so
/// the same title gives the same bytes on every fetch) and fits `maximumComponentBytes`
/// with room for the extension and a `.part` suffix under the usual 255-byte `NAME_MAX`.
public enum PodcastFileName {
    /// The directory inside the music directory that holds every feed's directory.
    public static let directory = "Podcasts"

    /// The most UTF-8 bytes of a title component: 255 less the extension and `.part`.
    public static let maximumComponentBytes = 200

    /// `Podcasts/<feed>/<episode>.<extension>`, relative to the music directory. A missing
    /// or unusable title becomes its fallback; an unusable extension becomes `mp3`.
    public static func relativePath(feedTitle: String?, episodeTitle: String?, fileExtension: String = "mp3",
                                    feedFallback: String = "Podcast", episodeFallback: String = "Episode") -> String {
        let feed = component(feedTitle ?? "", fallback: feedFallback)
        let episode = component(episodeTitle ?? "", fallback: episodeFallback)
        let isPlainExtension = (1 ... 8).contains(fileExtension.utf8.count)
            && fileExtension.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic || ("0" ... "9").contains($0) }
        return "\(directory)/\(feed)/\(episode).\(isPlainExtension ? fileExtension.lowercased() : "mp3")"
    }

    /// `title` as one safe path component, or `fallback` (made safe the same way, and
    /// `_` if even that is unusable) when nothing of the title is left.
    public static func component(_ title: String, fallback: String) -> String {
        if let name = sanitized(title) { return name }
        return sanitized(fallback) ?? "_"
    }

    private static func sanitized(_ title: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in title.precomposedStringWithCanonicalMapping.unicodeScalars {
            switch scalar {
            case "/", "\\":
                scalars.append("_")
            case _ where scalar.properties.generalCategory == .control || scalar.properties.isWhitespace:
                // Line breaks, tabs, NUL, escape sequences' ESC: a space, so words stay apart.
                scalars.append(" ")
            case "\u{202A}" ... "\u{202E}", "\u{2066}" ... "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}":
                // Bidirectional overrides and marks: they make a name read other than it is.
                continue
            default:
                scalars.append(scalar)
            }
        }
        var name = trimmed(String(scalars).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " "))
        if name.utf8.count > maximumComponentBytes {
            name = trimmed(truncated(name))
        }
        return name.isEmpty ? nil : name
    }

    /// Without leading dots (hidden files, `.` and `..`) and trailing dots and spaces (which
    /// SMB shares of the music directory cannot represent).
    private static func trimmed(_ name: String) -> String {
        var scalars = Substring(name).unicodeScalars
        while let first = scalars.first, first == "." || first == " " { scalars.removeFirst() }
        while let last = scalars.last, last == "." || last == " " { scalars.removeLast() }
        return String(scalars)
    }

    /// The longest prefix of whole characters within `maximumComponentBytes`; of whole
    /// scalars if the first character alone is longer (a letter under a thousand accents).
    private static func truncated(_ name: String) -> String {
        var result = ""
        var bytes = 0
        for character in name {
            bytes += character.utf8.count
            if bytes > maximumComponentBytes { break }
            result.append(character)
        }
        if result.isEmpty {
            var scalars = String.UnicodeScalarView()
            bytes = 0
            for scalar in name.unicodeScalars {
                bytes += UTF8.width(scalar)
                if bytes > maximumComponentBytes { break }
                scalars.append(scalar)
            }
            result = String(scalars)
        }
        return result
    }
}

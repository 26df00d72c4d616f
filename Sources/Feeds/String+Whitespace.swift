import Foundation

/// The whitespace rules feed text is read with: XML keeps every line break of a pretty-printed
/// `<title>`, a file name or a log line should not.
extension String {
    var trimmed: String {
        trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs of whitespace (line breaks included) as one space, trimmed; nil if nothing is left.
    var collapsedWhitespace: String? {
        let words = split(whereSeparator: \.isWhitespace)
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}

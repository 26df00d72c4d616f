import Foundation
@testable import HTTPStreaming
import Testing

/// `trimmingBlanks` is what HTTPStreaming uses in place of Foundation's
/// `trimmingCharacters(in: .whitespaces)` (the module imports only FoundationEssentials), so a
/// header or an ICY key is read exactly as before: the two agree on every string here.
@Suite struct TrimmingBlanksTests {
    static let samples: [String] = [
        "", " ", "\t", "  \t ", "audio/mpeg", " 16000 ", "\t16000\t", " audio/mpeg ; charset=x",
        "StreamTitle", "  StreamTitle", "\u{A0}key\u{A0}", "\u{3000}全角\u{3000}", "\u{2009}thin\u{202F}",
        "\u{1680}ogham\u{205F}", "line\n", "\nline", "\r\nkey\r\n", "\u{200B}zero width\u{200B}",
        "\u{FEFF}bom", "\u{180E}mongolian\u{180E}", " e\u{301} ", " \u{301}accent", "tail \u{301}", "a b\tc", "\u{85}next line\u{85}",
        "\u{2028}separator\u{2029}", "\u{B}vertical\u{C}", "x\u{0}",
    ]

    @Test(arguments: samples)
    func agreesWithFoundationsWhitespaces(_ text: String) {
        let expected = text.trimmingCharacters(in: .whitespaces)
        #expect(Array(text.trimmingBlanks.unicodeScalars) == Array(expected.unicodeScalars))
        let inner = Substring(text)
        #expect(Array(inner.trimmingBlanks.unicodeScalars) == Array(inner.trimmingCharacters(in: .whitespaces).unicodeScalars))
    }

    /// Every Unicode scalar is a blank exactly when Foundation's `.whitespaces` has it.
    @Test func blanksAreFoundationsWhitespacesExactly() {
        let different = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init)
            .filter { $0.isBlank != CharacterSet.whitespaces.contains($0) }
        #expect(different.isEmpty, "\(different.map { String($0.value, radix: 16) })")
    }

    /// A tab or a space separator is removed, a line end or any other character is kept.
    @Test func removesOnlyBlanks() {
        #expect(" \t\u{A0}x\u{3000} ".trimmingBlanks == "x")
        #expect("\nx\n".trimmingBlanks == "\nx\n")
    }
}

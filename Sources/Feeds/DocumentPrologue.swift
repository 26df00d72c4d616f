#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The check of a feed's prologue (what comes before its root element) that runs before
/// any XML parser sees the bytes.
///
/// Why not leave this to the parser's delegate: on Linux, `XMLParser` is
/// swift-corelibs-foundation over libxml2, and it never calls the delegate's
/// `foundInternalEntityDeclarationWithName`/`foundExternalEntityDeclarationWithName` (its
/// SAX handler has no `entityDecl`), while it always parses with `XML_PARSE_NOENT`, so the
/// entities a document declares are declared and expanded all the same. libxml2 2.9 stops
/// the classic "billion laughs" itself, but not a quadratic blow-up (one large entity
/// referenced many times): 16 MiB of that is hours of CPU. Podcast feeds never declare
/// entities, so a document type declaration with an internal subset is refused here, by
/// the exact grammar of XML 1.0's `doctypedecl` (so a `[` inside a quoted system literal
/// cannot hide one), and anything that does not follow that grammar is refused too.
///
/// It also tells an HTML page from a feed before parsing, for a clear message: HTML is
/// rarely well-formed XML, and libxml2 would otherwise report the page's first tag error.
struct DocumentPrologue {
    /// How the document's characters are laid out in bytes, as XML 1.0 Appendix F detects it.
    enum Layout {
        /// UTF-8, ASCII and the ISO-8859 and Windows code pages: ASCII is one byte.
        case asciiCompatible
        case utf16BigEndian
        case utf16LittleEndian
    }

    private let bytes: Data
    private let layout: Layout
    /// The current position, in code units of `layout`.
    private var position: Int

    /// Refuses the document if its prologue declares entities or is an HTML page's.
    static func check(_ bytes: Data) throws(FeedError) {
        var prologue = try DocumentPrologue(bytes)
        try prologue.scan()
    }

    private init(_ bytes: Data) throws(FeedError) {
        self.bytes = bytes
        let head = Array(bytes.prefix(4)) + [UInt8](repeating: 0xFF, count: max(0, 4 - bytes.count))
        switch (head[0], head[1], head[2], head[3]) {
        case (0x00, 0x00, 0xFE, 0xFF), (0xFF, 0xFE, 0x00, 0x00), (0x00, 0x00, 0x00, 0x3C), (0x3C, 0x00, 0x00, 0x00):
            throw .unsupportedEncoding("UTF-32")
        case (0x4C, 0x6F, 0xA7, 0x94):
            throw .unsupportedEncoding("EBCDIC")
        case (0xFE, 0xFF, _, _):
            (layout, position) = (.utf16BigEndian, 1)
        case (0xFF, 0xFE, _, _):
            (layout, position) = (.utf16LittleEndian, 1)
        case (0x00, 0x3C, 0x00, 0x3F):
            (layout, position) = (.utf16BigEndian, 0)
        case (0x3C, 0x00, 0x3F, 0x00):
            (layout, position) = (.utf16LittleEndian, 0)
        case (0xEF, 0xBB, 0xBF, _):
            (layout, position) = (.asciiCompatible, 3)
        default:
            (layout, position) = (.asciiCompatible, 0)
        }
    }

    private mutating func scan() throws(FeedError) {
        skipMisc()
        if matches("<!DOCTYPE", ignoringCase: true) {
            position += 9
            try documentTypeDeclaration()
            skipMisc()
        }
        if matches("<html", ignoringCase: true), let next = unit(at: position + 5), isSpace(next) || next == 0x3E || next == 0x2F {
            throw .htmlPage
        }
    }

    /// `S Name (S ExternalID)? S? ('[' intSubset ']' S?)? '>'`, after `<!DOCTYPE`.
    private mutating func documentTypeDeclaration() throws(FeedError) {
        guard skipSpace() else { throw .documentTypeNotAllowed(reason: "no name after <!DOCTYPE") }
        let nameStart = position
        while let unit = unit(at: position), !isSpace(unit), unit != 0x3E, unit != 0x5B { position += 1 }
        let name = text(from: nameStart, to: position)
        if name.lowercased() == "html" { throw .htmlPage }
        guard !name.isEmpty else { throw .documentTypeNotAllowed(reason: "no name after <!DOCTYPE") }
        var hadSpace = skipSpace()
        if hadSpace, matches("SYSTEM", ignoringCase: false) {
            position += 6
            try literal()
            hadSpace = skipSpace()
        } else if hadSpace, matches("PUBLIC", ignoringCase: false) {
            position += 6
            try literal()
            try literal()
            hadSpace = skipSpace()
        }
        switch unit(at: position) {
        case 0x3E:
            position += 1
        case 0x5B:
            throw .documentTypeNotAllowed(reason: "it has an internal subset, which can declare entities; feeds never need one")
        default:
            throw .documentTypeNotAllowed(reason: "not the grammar of a document type declaration")
        }
    }

    /// `S ('"' [^"]* '"' | "'" [^']* "'")`: a system or public identifier.
    private mutating func literal() throws(FeedError) {
        guard skipSpace(), let quote = unit(at: position), quote == 0x22 || quote == 0x27 else {
            throw .documentTypeNotAllowed(reason: "an external identifier without its quoted literal")
        }
        position += 1
        while let unit = unit(at: position), unit != quote { position += 1 }
        guard unit(at: position) == quote else { throw .documentTypeNotAllowed(reason: "an unterminated literal") }
        position += 1
    }

    /// Whitespace, comments and processing instructions (the XML declaration among them).
    /// An unterminated one ends the scan: the parser then reports it, and there is nothing
    /// after it that could declare an entity.
    private mutating func skipMisc() {
        while true {
            skipSpace()
            if matches("<?", ignoringCase: false) {
                skip(past: "?>")
            } else if matches("<!--", ignoringCase: false) {
                skip(past: "-->")
            } else {
                return
            }
        }
    }

    private mutating func skip(past terminator: String) {
        while unit(at: position) != nil, !matches(terminator, ignoringCase: false) { position += 1 }
        position += terminator.utf8.count
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = position
        while let unit = unit(at: position), isSpace(unit) { position += 1 }
        return position > start
    }

    private func isSpace(_ unit: UInt16) -> Bool {
        unit == 0x20 || unit == 0x09 || unit == 0x0A || unit == 0x0D
    }

    /// True if the ASCII text `literal` is at the current position.
    private func matches(_ literal: String, ignoringCase: Bool) -> Bool {
        for (offset, expected) in literal.utf8.enumerated() {
            guard let unit = unit(at: position + offset) else { return false }
            let folded = ignoringCase && (0x61 ... 0x7A).contains(unit) ? unit - 0x20 : unit
            let wanted = ignoringCase && (0x61 ... 0x7A).contains(expected) ? expected - 0x20 : expected
            if folded != UInt16(wanted) { return false }
        }
        return true
    }

    /// The code unit at `index`, in the document's layout, or nil past the end.
    private func unit(at index: Int) -> UInt16? {
        switch layout {
        case .asciiCompatible:
            guard index < bytes.count else { return nil }
            return UInt16(bytes[bytes.startIndex + index])
        case .utf16BigEndian, .utf16LittleEndian:
            let offset = bytes.startIndex + index * 2
            guard index * 2 + 1 < bytes.count else { return nil }
            let (high, low) = layout == .utf16BigEndian ? (bytes[offset], bytes[offset + 1]) : (bytes[offset + 1], bytes[offset])
            return UInt16(high) << 8 | UInt16(low)
        }
    }

    private func text(from start: Int, to end: Int) -> String {
        String(decoding: (start ..< end).compactMap { unit(at: $0) }.filter { $0 < 0x80 }.map { UInt8($0) }, as: UTF8.self)
    }
}

/// libxml2's error numbers (`xmlParserErrors`, which `XMLParser`'s error codes mirror), put
/// into words. On Linux `XMLParser` reports only the number, and "error 68" helps nobody
/// repair a feed; the common ones get a sentence, the rest their number.
enum XMLErrorCode {
    /// Warnings and namespace errors: libxml2 goes on after them and so does the reader.
    /// An undeclared prefix (`<itunes:duration>` without `xmlns:itunes`) is common in
    /// hand-made feeds; its element simply matches no namespace the reader knows.
    static func isTolerated(_ code: Int) -> Bool {
        (200 ..< 300).contains(code) || [93, 97, 98, 99, 100, 102, 106, 107].contains(code)
    }

    static func reason(_ code: Int) -> String {
        switch code {
        case 1: "a limit of the XML parser was reached"
        case 3, 4: "no XML element where the document should start ('<' expected)"
        case 5: "extra content after the end of the document"
        case 8: "an invalid character reference"
        case 9: "a character not allowed in XML"
        case 23: "an entity reference without its ';' (write a literal '&' as '&amp;')"
        case 26, 27: "an undefined entity (HTML entities such as '&nbsp;' are not XML)"
        case 31, 32: "an unknown or unsupported encoding"
        case 34: "a string is not closed"
        case 38: "'<' inside an attribute value"
        case 39: "an attribute value without quotes"
        case 41: "an attribute without a value"
        case 42: "an attribute given twice"
        case 62: "']]>' outside a CDATA section"
        case 68: "a name was expected: a stray '&' or '<' (write them as '&amp;' and '&lt;')"
        case 72, 73, 74: "a tag is not properly closed"
        case 76: "an end tag that does not match its start tag"
        case 77: "the document ends inside an element"
        case 81: "bytes that are not valid in the declared encoding"
        case 89: "entity expansion out of bounds"
        default: "XML error \(code)"
        }
    }
}

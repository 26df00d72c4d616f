import Foundation
import Testing
@testable import Feeds

/// The prologue check alone: which document type declarations pass, which do not.
@Suite struct DocumentPrologueTests {
    func check(_ text: String) -> FeedError? {
        check(Data(text.utf8))
    }

    func check(_ bytes: Data) -> FeedError? {
        do throws(FeedError) {
            try DocumentPrologue.check(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        "<rss version=\"2.0\"/>",
        "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- a [comment] <!ENTITY> -->\n<?xml-stylesheet href=\"s.xsl\"?>\n<rss/>",
        "<?xml version=\"1.0\"?><!DOCTYPE rss PUBLIC \"-//Netscape Communications//DTD RSS 0.91//EN\" \"http://my.netscape.com/publish/formats/rss-0.91.dtd\"><rss/>",
        "<!DOCTYPE rss SYSTEM 'rss.dtd' >\n<rss/>",
        "<!DOCTYPE rss><rss/>",
        "<rss><!DOCTYPE html [<!ENTITY a \"b\">]></rss>",  // not in the prologue: the parser's error to report
        "",
    ])
    func documentsWithoutAnInternalSubsetPass(_ text: String) {
        #expect(check(text) == nil)
    }

    @Test(arguments: [
        "<!DOCTYPE rss [<!ENTITY a \"b\">]><rss/>",
        "<!DOCTYPE rss[]><rss/>",
        "<?xml version=\"1.0\"?>\n<!--x-->\n<!DOCTYPE rss SYSTEM \"a\" [ ]><rss/>",
        "<!DOCTYPE rss PUBLIC \"p\" \"s\"\n[<!ENTITY a \"b\">]><rss/>",
        // A '[' or '>' inside a quoted literal must not end the scan early.
        "<!DOCTYPE rss SYSTEM \"x>[\" [<!ENTITY a \"b\">]><rss/>",
        "<!DOCTYPE rss PUBLIC 'a>' 'b[' [<!ENTITY a \"b\">]><rss/>",
        // Anything off the grammar is refused rather than guessed at.
        "<!DOCTYPE rss junk [<!ENTITY a \"b\">]><rss/>",
        "<!DOCTYPE rss system \"a\" [<!ENTITY a \"b\">]><rss/>",
        "<!DOCTYPE rss SYSTEM \"unterminated",
        "<!DOCTYPE>",
        "<!doctype rss [<!ENTITY a \"b\">]><rss/>",
    ])
    func anInternalSubsetOrAnythingOffTheGrammarIsRefused(_ text: String) {
        guard case .documentTypeNotAllowed = check(text) else {
            Issue.record("\(text.debugDescription) passed: \(String(describing: check(text)))")
            return
        }
    }

    @Test func utf16DocumentsAreCheckedToo() {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE rss [<!ENTITY a \"b\">]><rss/>"
        var littleEndian = Data([0xFF, 0xFE])
        var bigEndian = Data([0xFE, 0xFF])
        for unit in text.utf16 {
            littleEndian += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            bigEndian += [UInt8(unit >> 8), UInt8(unit & 0xFF)]
        }
        #expect(check(littleEndian) == .documentTypeNotAllowed(reason: "it has an internal subset, which can declare entities; feeds never need one"))
        #expect(check(bigEndian) == .documentTypeNotAllowed(reason: "it has an internal subset, which can declare entities; feeds never need one"))
        #expect(check(littleEndian.dropFirst(2)) != nil, "without a byte order mark, by its first characters")
    }

    @Test func utf32AndEBCDICAreRefused() {
        #expect(check(Data([0x3C, 0, 0, 0, 0x3F, 0, 0, 0])) == .unsupportedEncoding("UTF-32"))
        #expect(check(Data([0x4C, 0x6F, 0xA7, 0x94])) == .unsupportedEncoding("EBCDIC"))
    }

    @Test(arguments: [
        "<!DOCTYPE html><html><body>",
        "<!doctype html>\n<html lang=en>",
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://www.w3.org/TR/html4/strict.dtd\">",
        "\n\n<HTML>",
        "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><head/></html>",
    ])
    func htmlPagesAreRecognised(_ text: String) {
        #expect(check(text) == .htmlPage)
    }

    @Test func anElementThatMerelyStartsWithHtmlIsNotHTML() {
        #expect(check("<htmlfeed/>") == nil)
    }
}

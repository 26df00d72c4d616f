import Foundation
import Testing
@testable import Feeds

/// A feed is untrusted input: what a hostile one must not make the parser do. Serialized,
/// because the memory figures are the process's and the tests below are the heavy ones.
@Suite(.serialized) struct HostileFeedTests {
    let feedURL = URL(string: "https://feeds.example.com/hostile/feed.xml")!

    /// A feed whose titles reference `entity`, declared by `declaration` in an internal subset.
    func feed(declaring declaration: String, referencing entity: String) -> Data {
        Data("""
            <?xml version="1.0"?>
            <!DOCTYPE rss [\(declaration)]>
            <rss version="2.0"><channel><title>&\(entity);</title>
            <item><title>&\(entity);</title><guid>g</guid><enclosure url="https://e.com/a.mp3"/></item>
            </channel></rss>
            """.utf8)
    }

    func secretFile() throws -> (path: String, marker: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feeds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let marker = "SECRET-MARKER-\(UUID().uuidString)"
        let path = directory.appendingPathComponent("secret.txt").path
        try marker.write(toFile: path, atomically: false, encoding: .utf8)
        return (path, marker)
    }

    // MARK: External entities

    @Test func anExternalEntityNamingAFileIsRefusedAndTheFileNeverOpened() throws {
        let (path, _) = try secretFile()
        let watch = try FileOpenWatch(path: path)
        let body = feed(declaring: "<!ENTITY secret SYSTEM \"file://\(path)\">", referencing: "secret")
        #expect(throws: FeedError.documentTypeNotAllowed(reason: "it has an internal subset, which can declare entities; feeds never need one")) {
            try FeedParser().parse(body, from: feedURL)
        }
        #expect(!watch.wasTouched)
    }

    /// The same feed past the prologue check, straight to the XML parser: its settings
    /// alone (external entities never resolved) must keep the file closed too.
    @Test func theXMLParserAloneNeverOpensAnExternalEntitysFile() throws {
        let (path, marker) = try secretFile()
        let watch = try FileOpenWatch(path: path)
        let body = feed(declaring: "<!ENTITY secret SYSTEM \"file://\(path)\">", referencing: "secret")
        let result = Result { () throws(FeedError) -> Feed in try FeedReader.read(body, baseURL: feedURL) }
        #expect(!watch.wasTouched, "the secret file was opened")
        if case .success(let feed) = result {
            #expect(!(feed.title ?? "").contains(marker) && !feed.episodes.contains { ($0.title ?? "").contains(marker) })
        }
    }

    @Test func anExternalEntityNamingAURLIsRefusedAndNeverFetched() throws {
        let listener = try LoopbackListener()
        let general = feed(declaring: "<!ENTITY probe SYSTEM \"\(listener.url)/general\">", referencing: "probe")
        let parameter = feed(declaring: "<!ENTITY % probe SYSTEM \"\(listener.url)/parameter\"> %probe;", referencing: "amp")
        for body in [general, parameter] {
            #expect(throws: FeedError.self) { try FeedParser().parse(body, from: feedURL) }
        }
        #expect(listener.stop() == 0, "the parser connected to \(listener.url)")
    }

    @Test func theXMLParserAloneNeverFetchesAnExternalEntitysURL() throws {
        let listener = try LoopbackListener()
        let general = feed(declaring: "<!ENTITY probe SYSTEM \"\(listener.url)/general\">", referencing: "probe")
        let parameter = feed(declaring: "<!ENTITY % probe SYSTEM \"\(listener.url)/parameter\"> %probe;", referencing: "amp")
        for body in [general, parameter] {
            _ = Result { () throws(FeedError) -> Feed in try FeedReader.read(body, baseURL: feedURL) }
        }
        #expect(listener.stop() == 0, "the parser connected to \(listener.url)")
    }

    /// A document type with only an external DTD passes the prologue check (old RSS 0.91
    /// feeds carry Netscape's); the DTD must not be loaded. On this Foundation that holds even
    /// with `shouldResolveExternalEntities` and the policy flipped (corelibs' SAX mode has no
    /// document for libxml2 to load a subset into; tried), so this guards against a
    /// Foundation that behaves otherwise, as Darwin's may, rather than against our settings.
    @Test func anExternalDTDIsNeverFetched() throws {
        let listener = try LoopbackListener()
        let body = Data("""
            <?xml version="1.0"?>
            <!DOCTYPE rss SYSTEM "\(listener.url)/rss.dtd">
            <rss version="2.0"><channel><title>T</title>
            <item><guid>g</guid><enclosure url="https://e.com/a.mp3"/></item></channel></rss>
            """.utf8)
        let feed = try FeedParser().parse(body, from: feedURL)
        #expect(feed.episodes.count == 1)
        #expect(listener.stop() == 0, "the parser fetched the external DTD")
    }

    // MARK: Entity expansion

    static func billionLaughs(inAttribute: Bool = false) -> Data {
        var declarations = "<!ENTITY lol \"lol\">"
        for level in 1 ... 9 {
            declarations += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10).replacingOccurrences(of: "&lol0;", with: "&lol;") + "\">"
        }
        let use = inAttribute ? "<enclosure url=\"https://e.com/&lol9;.mp3\"/>" : "<title>&lol9;</title>"
        return Data("""
            <?xml version="1.0"?>
            <!DOCTYPE rss [\(declarations)]>
            <rss version="2.0"><channel><title>&lol9;</title><item>\(use)<guid>g</guid></item></channel></rss>
            """.utf8)
    }

    /// One 100 kB entity referenced 100 000 times: 400 kB of feed, 10 GB of text. libxml2
    /// 2.9's amplification check does not catch it (each reference is small next to the
    /// document read so far); unprotected, this is minutes of CPU.
    static func quadraticBlowUp() -> Data {
        Data("""
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY a "\(String(repeating: "x", count: 100_000))">]>
            <rss version="2.0"><channel><title>\(String(repeating: "&a;", count: 100_000))</title></channel></rss>
            """.utf8)
    }

    @Test(arguments: [("billion laughs", HostileFeedTests.billionLaughs()),
                      ("billion laughs in an attribute", HostileFeedTests.billionLaughs(inAttribute: true)),
                      ("quadratic blow-up", HostileFeedTests.quadraticBlowUp())])
    func entityExpansionFailsFastInBoundedMemory(_ name: String, _ body: Data) throws {
        let (result, meter) = try ResourceMeter.measure {
            Result { () throws(FeedError) -> Feed in try FeedParser().parse(body, from: feedURL) }
        }
        print("\(name): \(String(format: "%.4f", meter.seconds)) s, peak RSS +\(meter.peakGrowth >> 10) KiB")
        guard case .failure(.documentTypeNotAllowed) = result else {
            Issue.record("\(name): expected the document type to be refused, got \(result)")
            return
        }
        #expect(meter.seconds < 3, "\(name) took \(meter.seconds) s")
        #expect(meter.peakGrowth < 64 << 20, "\(name) grew the peak RSS by \(meter.peakGrowth >> 20) MiB")
    }

    /// The classic billion laughs straight to the XML parser: libxml2's own amplification
    /// check stops it. Kept as a figure for what the prologue check adds, and as a check that
    /// the reader turns libxml2's verdict into an error rather than a feed.
    @Test func theXMLParserAloneStopsTheClassicBillionLaughs() throws {
        let (result, meter) = try ResourceMeter.measure {
            Result { () throws(FeedError) -> Feed in try FeedReader.read(Self.billionLaughs(), baseURL: feedURL) }
        }
        print("billion laughs, XML parser alone: \(String(format: "%.4f", meter.seconds)) s, peak RSS +\(meter.peakGrowth >> 10) KiB")
        guard case .failure(.malformed(_, _, let reason)) = result else {
            Issue.record("expected the expansion to fail, got \(result)")
            return
        }
        #expect(reason == "entity expansion out of bounds")
        #expect(meter.peakGrowth < 64 << 20)
    }

    // MARK: Size

    /// 100 MiB offered in 64 KiB chunks, as an HTTP body arrives: refused at the chunk that
    /// would pass 16 MiB, and never more than 16 MiB held.
    @Test func aBodyPastTheCapIsRefusedAsItArrives() throws {
        let chunk = [UInt8](repeating: 0x20, count: 64 << 10)
        var accepted = 0
        let (failure, meter) = try ResourceMeter.measure { () -> FeedError? in
            var body = FeedBody()
            for _ in 0 ..< (100 << 20) / chunk.count {
                do throws(FeedError) {
                    try body.append(chunk)
                    accepted += chunk.count
                } catch {
                    #expect(body.data.count == FeedParser.defaultMaximumBodySize)
                    return error
                }
            }
            return nil
        }
        print("100 MiB body: refused after \(accepted >> 20) MiB, peak RSS +\(meter.peakGrowth >> 20) MiB")
        #expect(failure == .bodyTooLarge(limit: 16 << 20))
        #expect(accepted == 16 << 20)
        #expect(meter.peakGrowth < 48 << 20)
    }

    @Test func theParserRefusesABodyOneBytePastTheCapAndReadsOneAtTheCap() throws {
        let head = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Big</title>"
        let tail = "<item><guid>g</guid><enclosure url=\"https://e.com/a.mp3\"/></item></channel></rss>"
        let comment = "<!--" + String(repeating: "x", count: 1017) + "-->"  // 1 KiB
        var text = head
        let room = FeedParser.defaultMaximumBodySize - head.utf8.count - tail.utf8.count
        text += String(repeating: comment, count: room / comment.utf8.count)
        text += String(repeating: " ", count: room % comment.utf8.count) + tail
        let atCap = Data(text.utf8)
        try #require(atCap.count == FeedParser.defaultMaximumBodySize)
        #expect(try FeedParser().parse(atCap, from: feedURL).episodes.count == 1)
        #expect(throws: FeedError.bodyTooLarge(limit: 16 << 20)) {
            try FeedParser().parse(atCap + Data(" ".utf8), from: feedURL)
        }
    }

    // MARK: Depth

    /// Well-formed but 100 000 elements deep: refused past 256 levels (libxml2's push parser
    /// sets no limit of its own), so the reader's stacks do not grow with what a feed claims.
    @Test func deepNestingIsRefused() {
        let body = Data(("<rss>" + String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000) + "</rss>").utf8)
        #expect(throws: FeedError.malformed(line: 1, column: 5 + 3 * 256, reason: "elements nested deeper than 256 levels")) {
            try FeedParser().parse(body, from: feedURL)
        }
    }
}

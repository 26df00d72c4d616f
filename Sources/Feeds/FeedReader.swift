import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads RSS 2.0 (with the iTunes podcast namespace) and Atom from bytes that passed
/// `DocumentPrologue`, as `XMLParser` events, into a `Feed`.
///
/// `XMLParser` streams (SAX), so memory follows the episodes kept, not the document's
/// depth or text: only the few fields an episode needs are collected. Elements are matched
/// by namespace URI and local name (`shouldProcessNamespaces`), never by prefix, and only
/// where they belong (an item's direct children), so a `<title>` inside some extension
/// element cannot rename an episode. The first error that is not a mere warning ends the
/// read (`abortParsing`): libxml2 runs in recovery mode under `XMLParser` and would
/// otherwise go on and report a repaired guess of a broken feed.
///
/// A class because `XMLParserDelegate` is a class protocol; it lives for one `read` on one
/// thread and never escapes, so it need not be `Sendable`.
final class FeedReader: NSObject, XMLParserDelegate {
    private enum Format { case rss, atom }

    /// The fields read as text.
    private enum Field { case feedTitle, title, guid, rssDate, atomPublished, atomUpdated, duration }

    /// What an item has said so far.
    private struct Item {
        var title: String?
        var guid: String?
        var enclosure: Enclosure?
        /// The item had an enclosure the reader refused (not http or https).
        var refusedEnclosure = false
        var published: Date?
        var updated: Date?
        var duration: Duration?
        var chapters: URL?
    }

    private var format: Format?
    private var failure: FeedError?
    /// Open elements as (namespace URI, local name), the root first.
    private var open: [(namespace: String, name: String)] = []
    /// The base URL in effect inside each open element (`xml:base`), the feed's URL first.
    private var bases: [URL]
    private var capture: (field: Field, depth: Int, text: String)?
    private var item: Item?
    private var feedTitle: String?
    private var episodes: [Episode] = []
    private var identities: Set<String> = []
    private var skipped = 0

    /// libxml2's own default for a tree, which its push parser (the one `XMLParser` uses)
    /// does not enforce: a feed needs a handful of levels, and each level costs the reader
    /// a stack entry.
    static let maximumDepth = 256

    private init(baseURL: URL) {
        bases = [baseURL]
    }

    /// The feed in `bytes`, fetched from `baseURL` (which relative enclosure URLs resolve against).
    static func read(_ bytes: Data, baseURL: URL) throws(FeedError) -> Feed {
        let reader = FeedReader(baseURL: baseURL)
        // A stream, which `XMLParser` hands to libxml2 in 128 KiB chunks: given as one
        // `Data`, it would pass the whole body in one chunk, and libxml2 2.9 refuses any chunk
        // with more than 10 000 000 bytes left to parse ("Huge input lookup").
        let parser = XMLParser(stream: InputStream(data: bytes))
        parser.shouldProcessNamespaces = true
        // Both are the defaults; said here because they are the protection against
        // external entities (`file:///etc/passwd`, a URL to probe): on Linux the entity
        // loader corelibs installs consults the policy and loads nothing under `.never`.
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        parser.delegate = reader
        let parsed = parser.parse()
        if let failure = reader.failure { throw failure }
        if !parsed, let error = parser.parserError.map({ $0 as NSError }), !XMLErrorCode.isTolerated(error.code) {
            throw .malformed(line: parser.lineNumber, column: parser.columnNumber, reason: XMLErrorCode.reason(error.code))
        }
        guard reader.format != nil else { throw .malformed(line: 1, column: 1, reason: XMLErrorCode.reason(4)) }
        return Feed(title: reader.feedTitle, episodes: reader.episodes, skippedItems: reader.skipped)
    }

    private func fail(_ error: FeedError, _ parser: XMLParser) {
        if failure == nil { failure = error }
        parser.abortParsing()
    }

    // MARK: Elements

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String]) {
        guard failure == nil else { return }
        guard open.count < Self.maximumDepth else {
            fail(.malformed(line: parser.lineNumber, column: parser.columnNumber,
                            reason: "elements nested deeper than \(Self.maximumDepth) levels"), parser)
            return
        }
        let namespace = namespaceURI ?? XMLNamespace.none
        let base = bases.last!
        bases.append(attributes["xml:base"].flatMap { URL(string: $0.trimmed, relativeTo: base)?.absoluteURL } ?? base)
        defer { open.append((namespace, elementName)) }

        if open.isEmpty {
            switch (namespace, elementName) {
            case (XMLNamespace.none, "rss"): format = .rss
            case (XMLNamespace.atom, "feed"): format = .atom
            case (_, let name) where name.lowercased() == "html": fail(.htmlPage, parser)
            default: fail(.notAFeed(rootElement: qualifiedName ?? elementName), parser)
            }
            return
        }
        guard capture == nil else { return }
        switch format {
        case .rss: startRSS(namespace, elementName, attributes)
        case .atom: startAtom(namespace, elementName, attributes)
        case nil: break
        }
    }

    /// `rss/channel/title`, `rss/channel/item` and an item's direct children.
    private func startRSS(_ namespace: String, _ name: String, _ attributes: [String: String]) {
        let depth = open.count
        if depth == 2, namespace == XMLNamespace.none, open[1] == (XMLNamespace.none, "channel") {
            if name == "title" { startCapture(.feedTitle) }
            if name == "item" { item = Item() }
        } else if depth == 3, item != nil {
            switch (namespace, name) {
            case (XMLNamespace.none, "title"): startCapture(.title)
            case (XMLNamespace.none, "guid"): startCapture(.guid)
            case (XMLNamespace.none, "pubDate"): startCapture(.rssDate)
            case (XMLNamespace.none, "enclosure"): addEnclosure(attributes["url"], attributes["length"], attributes["type"])
            case (let uri, "duration") where XMLNamespace.iTunes.contains(uri): startCapture(.duration)
            case (let uri, "chapters") where XMLNamespace.podcast.contains(uri): addChapters(attributes["url"], attributes["type"])
            default: break
            }
        }
    }

    /// `feed/title`, `feed/entry` and an entry's direct children.
    private func startAtom(_ namespace: String, _ name: String, _ attributes: [String: String]) {
        let depth = open.count
        if depth == 1, namespace == XMLNamespace.atom {
            if name == "title" { startCapture(.feedTitle) }
            if name == "entry" { item = Item() }
        } else if depth == 2, item != nil {
            switch (namespace, name) {
            case (XMLNamespace.atom, "title"): startCapture(.title)
            case (XMLNamespace.atom, "id"): startCapture(.guid)
            case (XMLNamespace.atom, "published"): startCapture(.atomPublished)
            case (XMLNamespace.atom, "updated"): startCapture(.atomUpdated)
            case (XMLNamespace.atom, "link") where attributes["rel"]?.trimmed == "enclosure":
                addEnclosure(attributes["href"], attributes["length"], attributes["type"])
            case (let uri, "duration") where XMLNamespace.iTunes.contains(uri): startCapture(.duration)
            default: break
            }
        }
    }

    private func startCapture(_ field: Field) {
        capture = (field, open.count, "")
    }

    /// The item's first enclosure, resolved against the `xml:base` in effect (the feed's
    /// URL unless the document says otherwise); only http and https, since whatever takes
    /// the URL next will fetch it.
    private func addEnclosure(_ url: String?, _ length: String?, _ type: String?) {
        guard item?.enclosure == nil, let url, let base = bases.last else { return }
        guard let resolved = URL(string: url.trimmed, relativeTo: base)?.absoluteURL,
              let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = resolved.host, !host.isEmpty
        else {
            item?.refusedEnclosure = true
            return
        }
        let bytes = length.flatMap { Int64($0.trimmed) }.flatMap { $0 > 0 ? $0 : nil }
        item?.enclosure = Enclosure(url: resolved, length: bytes, type: type.flatMap(\.collapsedWhitespace))
    }

    /// The item's first `podcast:chapters` in the JSON chapters format, resolved as an
    /// enclosure is; only http and https (the downloads fetch it).
    private func addChapters(_ url: String?, _ type: String?) {
        guard item?.chapters == nil, let url, let base = bases.last,
              let type = type?.trimmed.lowercased(), type == "application/json+chapters" || type == "application/json",
              let resolved = URL(string: url.trimmed, relativeTo: base)?.absoluteURL,
              let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = resolved.host, !host.isEmpty else { return }
        item?.chapters = resolved
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard failure == nil, !open.isEmpty else { return }
        open.removeLast()
        bases.removeLast()
        if let capture, capture.depth == open.count {
            self.capture = nil
            finish(capture.field, capture.text)
        }
        let isItem = format == .rss ? open.count == 2 && elementName == "item" : open.count == 1 && elementName == "entry"
        if isItem, (namespaceURI ?? "") == (format == .rss ? XMLNamespace.none : XMLNamespace.atom), let item {
            self.item = nil
            finish(item)
        }
    }

    private func finish(_ field: Field, _ text: String) {
        switch field {
        case .feedTitle: feedTitle = text.collapsedWhitespace
        case .title: item?.title = text.collapsedWhitespace
        case .guid: item?.guid = text.collapsedWhitespace
        case .rssDate: item?.published = FeedDate.parse(text)
        case .atomPublished: item?.published = FeedDate.rfc3339(text) ?? FeedDate.rfc822(text)
        case .atomUpdated: item?.updated = FeedDate.rfc3339(text) ?? FeedDate.rfc822(text)
        case .duration: item?.duration = EpisodeDuration.parse(text)
        }
    }

    /// An episode, identified by its GUID or else its enclosure URL; the first of several
    /// items with one identity wins, so one fetch never yields the same episode twice.
    private func finish(_ item: Item) {
        guard let enclosure = item.enclosure else {
            skipped += 1
            return
        }
        let identity = item.guid ?? enclosure.url.absoluteString
        guard identities.insert(identity).inserted else {
            skipped += 1
            return
        }
        episodes.append(Episode(id: identity, title: item.title, enclosure: enclosure,
                                published: item.published ?? item.updated, duration: item.duration, chapters: item.chapters))
    }

    // MARK: Text

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        capture?.text += string
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        capture?.text += String(decoding: CDATABlock, as: UTF8.self)
    }

    // MARK: Errors and declarations

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        let code = (parseError as NSError).code
        guard !XMLErrorCode.isTolerated(code) else { return }
        fail(.malformed(line: parser.lineNumber, column: parser.columnNumber, reason: XMLErrorCode.reason(code)), parser)
    }

    // `DocumentPrologue` refuses every document that could declare an entity before the
    // parser runs. These abort anyway where a Foundation does report declarations (Darwin's
    // does; Linux's reports only unparsed entities), so the rule holds without the scan.

    func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
        fail(.documentTypeNotAllowed(reason: "it declares the entity '\(name)'"), parser)
    }

    func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
        fail(.documentTypeNotAllowed(reason: "it declares the external entity '\(name)'"), parser)
    }

    func parser(_ parser: XMLParser, foundUnparsedEntityDeclarationWithName name: String, publicID: String?, systemID: String?,
                notationName: String?) {
        fail(.documentTypeNotAllowed(reason: "it declares the unparsed entity '\(name)'"), parser)
    }

    func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
        nil
    }
}

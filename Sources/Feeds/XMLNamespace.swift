/// The namespaces a podcast feed is read in, by URI: the prefix is the feed author's choice
/// (`itunes:`, `podcast:`, `i:`), the URI is what names the vocabulary.
enum XMLNamespace {
    /// RSS 2.0 elements have no namespace.
    static let none = ""
    static let atom = "http://www.w3.org/2005/Atom"
    /// Apple's podcast namespace. The capitalised spelling is the one Apple's own early
    /// documentation printed; feeds still carry it, and it names the same vocabulary.
    static let iTunes: Set<String> = [
        "http://www.itunes.com/dtds/podcast-1.0.dtd",
        "http://www.itunes.com/DTDs/Podcast-1.0.dtd",
    ]
    /// The Podcasting 2.0 namespace (`podcast:chapters`, ...), as the Podcast Index names it.
    static let podcast: Set<String> = [
        "https://podcastindex.org/namespace/1.0",
        "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md",
    ]
}

extension QueuePlayer {
    /// The chapter of the current item being heard: its index in ``PlayerItem/chapters`` and
    /// its span, in the item's time.
    public struct CurrentChapter: Sendable, Hashable {
        public var index: Int
        public var chapter: Chapter
        public var start: Double { chapter.start }
        public var end: Double { chapter.end }
    }

    /// The chapter heard now (at ``currentTime()``); nil without a current item, or when no
    /// chapter holds the time (none, or in a gap between two).
    public func currentChapter() -> CurrentChapter? {
        guard let item = currentItem else { return nil }
        let chapters = item.chapters
        guard !chapters.isEmpty, let index = Chapter.index(at: currentTime().seconds, in: chapters) else { return nil }
        return CurrentChapter(index: index, chapter: chapters[index])
    }
}

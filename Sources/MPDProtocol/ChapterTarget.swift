/// `seekchapter`'s argument: a chapter number (from 1), or a move from the current chapter.
public enum ChapterTarget: Sendable, Hashable {
    /// The chapter numbered so (1 is the first).
    case number(Int)
    /// The chapter after the current one.
    case next
    /// The current chapter's start, or the one before within its first seconds (a back button).
    case previous

    /// `N` (1 or more), `next` or `previous`; nil for anything else.
    public init?(argument: String) {
        switch argument {
        case "next": self = .next
        case "previous": self = .previous
        default:
            guard !argument.isEmpty, argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }), argument.utf8.count <= 9,
                  let number = Int(argument), number >= 1 else { return nil }
            self = .number(number)
        }
    }
}

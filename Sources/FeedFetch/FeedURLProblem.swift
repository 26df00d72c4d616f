/// Why a text is not a feed URL.
public struct FeedURLProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
}

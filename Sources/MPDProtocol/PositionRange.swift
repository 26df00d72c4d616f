/// A queue position or range as `delete` and `playlistinfo` accept it: `POS`, `START:END`, `START:`.
///
/// `end` is exclusive; `nil` means "to the end of the queue" (`START:`, or `-1`, which mpd
/// still accepts as "everything").
public struct PositionRange: Hashable, Sendable {
    /// The first position, 0-based.
    public var start: Int
    /// One past the last position, or `nil` for an open end.
    public var end: Int?

    /// Creates a range from `start` up to, not including, `end` (`nil`: the end of the queue).
    public init(start: Int, end: Int?) {
        self.start = start
        self.end = end
    }

    /// The whole queue: `playlistinfo` without an argument, or `-1`.
    public static let all = PositionRange(start: 0, end: nil)

    /// Exactly one position.
    public static func single(_ position: Int) -> PositionRange {
        PositionRange(start: position, end: position + 1)
    }

    /// The positions `playlistinfo` prints for a queue of `queueLength` songs.
    ///
    /// As in mpd, the end is clipped to the queue; a start beyond the clipped end is
    /// `Bad song index`, while a start equal to the length prints nothing.
    public func positionsForListing(queueLength: Int) throws(MPDError) -> Range<Int> {
        let clippedEnd = Swift.min(end ?? queueLength, queueLength)
        guard start <= clippedEnd else { throw .badSongIndex }
        return start..<clippedEnd
    }

    /// The positions `delete` removes from a queue of `queueLength` songs.
    ///
    /// As in mpd, a start at or beyond the queue length is `Bad song index`; the end is
    /// clipped; an empty range deletes nothing.
    public func positionsForDeletion(queueLength: Int) throws(MPDError) -> Range<Int> {
        guard start < queueLength else { throw .badSongIndex }
        let clippedEnd = Swift.min(end ?? queueLength, queueLength)
        return start..<Swift.max(start, clippedEnd)
    }
}

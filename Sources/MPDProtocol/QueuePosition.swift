/// Where `add`, `addid`, `move` and `load` put songs: an absolute queue position, or one
/// relative to the current song (`+N`: N songs after it, `-N`: N songs before it), as MPD
/// 0.23 accepts them.
///
/// The bounds depend on the queue at the moment the command runs, so the executor resolves
/// the position with ``insertionIndex(queueLength:current:)`` or
/// ``moveDestination(queueLength:current:moving:)``, which throw MPD's errors.
public struct QueuePosition: Hashable, Sendable {
    public enum Anchor: Hashable, Sendable {
        case start, afterCurrent, beforeCurrent
    }

    public var anchor: Anchor
    /// The number after the sign (or the absolute position).
    public var offset: Int
    /// The argument as the client sent it, for error messages.
    public var text: String

    public init(anchor: Anchor, offset: Int, text: String) {
        self.anchor = anchor
        self.offset = offset
        self.text = text
    }

    /// An absolute position.
    public static func absolute(_ position: Int) -> QueuePosition {
        QueuePosition(anchor: .start, offset: position, text: "\(position)")
    }

    /// Parses `N`, `+N` or `-N`.
    static func parse(_ text: String, _ parse: ArgumentParsing) throws(MPDError) -> QueuePosition {
        if text.hasPrefix("+") { return QueuePosition(anchor: .afterCurrent, offset: try parse.unsigned(String(text.dropFirst())), text: text) }
        if text.hasPrefix("-") { return QueuePosition(anchor: .beforeCurrent, offset: try parse.unsigned(String(text.dropFirst())), text: text) }
        return QueuePosition(anchor: .start, offset: try parse.unsigned(text), text: text)
    }

    /// Where songs are inserted in a queue of `queueLength` songs whose current song is at `current`.
    public func insertionIndex(queueLength: Int, current: Int?) throws(MPDError) -> Int {
        switch anchor {
        case .start:
            return try Self.bounded(offset, queueLength, digits)
        case .afterCurrent:
            let current = try Self.require(current)
            return current + 1 + (try Self.bounded(offset, queueLength - current - 1, digits))
        case .beforeCurrent:
            let current = try Self.require(current)
            return current - (try Self.bounded(offset, current, digits))
        }
    }

    /// Where the first of `moving` (positions of the queue) lands, counted in the queue
    /// without them, as MPD's `move` and `moveid` resolve it.
    public func moveDestination(queueLength: Int, current: Int?, moving: Range<Int>) throws(MPDError) -> Int {
        let room = queueLength - moving.count
        switch anchor {
        case .start:
            return try Self.bounded(offset, room, digits)
        case .afterCurrent, .beforeCurrent:
            var current = try Self.require(current)
            if moving.contains(current) { throw MPDError(.argument, "Cannot move current song relative to itself") }
            if current >= moving.upperBound { current -= moving.count }
            let bound = try Self.bounded(offset, room - current, digits)
            return anchor == .afterCurrent ? current + 1 + bound : max(0, current - bound)
        }
    }

    /// The number as MPD's parser saw it (after the sign), for `Number too large:`.
    private var digits: String { anchor == .start ? text : String(text.dropFirst()) }

    private static func require(_ current: Int?) throws(MPDError) -> Int {
        guard let current else { throw MPDError(.playerSync, "No current song") }
        return current
    }

    private static func bounded(_ value: Int, _ maximum: Int, _ text: String) throws(MPDError) -> Int {
        guard value <= maximum else { throw MPDError(.argument, "Number too large: \(text)") }
        return value
    }
}

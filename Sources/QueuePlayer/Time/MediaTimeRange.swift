/// A span of a media timeline (`CMTimeRange`): where it starts and how long it lasts.
public struct MediaTimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: MediaTime
    public var duration: MediaTime

    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// Where it ends, in seconds.
    public var endSeconds: Double { start.seconds + duration.seconds }

    public var description: String { "[\(start.seconds), \(endSeconds))" }
}

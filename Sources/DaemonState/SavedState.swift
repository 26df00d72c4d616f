/// What the daemon remembers across restarts: the queue, where it was in it, and
/// whether it was playing.
public struct SavedState: Codable, Equatable, Sendable {
    /// The format this daemon writes; a file with a higher version is from a newer daemon.
    public static let currentVersion = 1

    public var version = SavedState.currentVersion
    /// The queued files, as absolute paths, and streams, as their `http(s)://` URLs, in order.
    public var queue: [String]
    /// The position of the current item in `queue`, if any.
    public var current: Int?
    /// Seconds into the current item.
    public var position: Double
    /// True if playback was paused (or stopped) rather than playing.
    public var paused: Bool
    /// The play modes and the mixer, as `status` shows them (`repeat: 1`, `single: oneshot`,
    /// `volume: 70`). Absent from files written before they were kept: then the defaults.
    public var modes: Modes?
    /// Which audio outputs were enabled, by name (`outputs`' `outputname`). Absent from files
    /// written before outputs could be switched: then all are enabled.
    public var outputs: [String: Bool]?
    /// Each queued file's range (`rangeid`), index for index with ``queue``: its start and end
    /// in milliseconds, an end of 0 meaning the file's end, `[0, 0]` the whole file. Absent when
    /// no file has one (and from files written before ranges were kept), as mpd's state file
    /// has a `Range:` only for a song with one.
    public var ranges: [[Int]]?
    /// The playback rate, pitch algorithm and skip silence (``Pace``). Absent from files written
    /// before they were kept: then the settings' defaults.
    public var pace: Pace?

    /// The play modes and the software mixer's volume.
    public struct Modes: Codable, Equatable, Sendable {
        public var repeats: Bool
        public var random: Bool
        /// `0`, `1` or `oneshot`.
        public var single: String
        /// `0`, `1` or `oneshot`.
        public var consume: String
        /// 0 to 100.
        public var volume: Int
        /// `replay_gain_mode`: `off`, `track`, `album` or `auto`; nil in a state saved without it.
        public var replayGain: String?

        public init(repeats: Bool = false, random: Bool = false, single: String = "0", consume: String = "0", volume: Int = 100,
                    replayGain: String? = nil) {
            self.replayGain = replayGain
            self.repeats = repeats
            self.random = random
            self.single = single
            self.consume = consume
            self.volume = volume
        }
    }

    public init(version: Int = SavedState.currentVersion, queue: [String], current: Int?, position: Double, paused: Bool,
                modes: Modes? = nil, outputs: [String: Bool]? = nil, ranges: [[Int]]? = nil, pace: Pace? = nil) {
        self.version = version
        self.queue = queue
        self.current = current
        self.position = position
        self.paused = paused
        self.modes = modes
        self.outputs = outputs
        self.ranges = ranges
        self.pace = pace
    }
}

extension SavedState {
    /// This state without the files `isGone` rejects (and their ranges), and those files. The
    /// current item keeps its place among the files left, or there is none if it is gone itself.
    public func droppingFiles(where isGone: (String) -> Bool) -> (state: SavedState, dropped: [String]) {
        var kept = self
        kept.queue = []
        kept.ranges = ranges.map { _ in [] }
        var droppedPositions: [Int] = []
        for (index, path) in queue.enumerated() {
            if isGone(path) {
                droppedPositions.append(index)
            } else {
                kept.queue.append(path)
                if let ranges, ranges.indices.contains(index) { kept.ranges?.append(ranges[index]) }
            }
        }
        kept.current = current.flatMap { current in
            droppedPositions.contains(current) ? nil : current - droppedPositions.count(where: { $0 < current })
        }
        return (kept, droppedPositions.map { queue[$0] })
    }
}

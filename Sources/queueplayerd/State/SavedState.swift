import Foundation

/// What the daemon remembers across restarts: the queue, where it was in it, and
/// whether it was playing.
struct SavedState: Codable, Equatable, Sendable {
    /// The format this daemon writes; a file with a higher version is from a newer daemon.
    static let currentVersion = 1

    var version = SavedState.currentVersion
    /// The queued files, as absolute paths, in order.
    var queue: [String]
    /// The position of the current item in `queue`, if any.
    var current: Int?
    /// Seconds into the current item.
    var position: Double
    /// True if playback was paused (or stopped) rather than playing.
    var paused: Bool
}

extension SavedState {
    /// This state without the files `isGone` rejects, and those files. The current
    /// item keeps its place among the files left, or there is none if it is gone itself.
    func droppingFiles(where isGone: (String) -> Bool) -> (state: SavedState, dropped: [String]) {
        var kept = self
        kept.queue = []
        var droppedPositions: [Int] = []
        for (index, path) in queue.enumerated() {
            if isGone(path) { droppedPositions.append(index) } else { kept.queue.append(path) }
        }
        kept.current = current.flatMap { current in
            droppedPositions.contains(current) ? nil : current - droppedPositions.count(where: { $0 < current })
        }
        return (kept, droppedPositions.map { queue[$0] })
    }
}

import QueuePlayer
import Synchronization

/// Follows the ICY name and title (`PlayerItem.streamName`, `streamTitle`) of the item the
/// player is on: mpd reports a new title as it reports a new song (idle `player`), and the
/// WebSocket pushes it (`{"event": "stream", ...}`).
///
/// An observation of the player's `currentItem` re-points two observations at each new
/// network item. `changed` gets the item on the thread its metadata changed on (the engine's
/// network side), so it must only hand the work on (post an event, hop to a queue).
///
/// Thread-safe: the observations are owned by `Mutex`es.
package final class StreamMetadataFollower: Sendable {
    private let itemObservations = Mutex<[Observation]>([])
    private let playerObservation = Mutex<Observation?>(nil)
    private let changed: @Sendable (PlayerItem) -> Void

    package init(player: QueuePlayer, changed: @escaping @Sendable (PlayerItem) -> Void) {
        self.changed = changed
        let observation = player.observe(\.currentItem, options: [.initial, .new]) { [weak self] _, change in
            self?.follow(change.newValue ?? nil)
        }
        playerObservation.withLock { $0 = observation }
    }

    /// Ends every observation.
    func stop() {
        playerObservation.withLock { $0 }?.invalidate()
        follow(nil)
    }

    private func follow(_ item: PlayerItem?) {
        var observations: [Observation] = []
        if let item, StreamURL.isNetwork(item.url) {
            let changed = changed
            observations.append(item.observe(\.streamName, options: [.new]) { item, _ in changed(item) })
            observations.append(item.observe(\.streamTitle, options: [.new]) { item, _ in changed(item) })
        }
        let old = itemObservations.withLock { current in
            defer { current = observations }
            return current
        }
        for observation in old { observation.invalidate() }
    }
}

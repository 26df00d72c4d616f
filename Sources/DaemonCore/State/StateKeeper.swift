import DaemonState
import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer

/// Keeps the daemon's ``SavedState`` on disk: after every queue or transport
/// change, every few seconds while playing, and when the daemon stops; and
/// brings it back when the daemon starts.
///
/// Lives on the partition's queue. Each save snapshots the state there and
/// writes it on a queue of its own, inside a background task of the partition's application,
/// so a save that began just before the daemon went to the background still finishes.
///
/// A state counts as saved only once its write succeeded. A failed write (a full disk, a
/// read-only directory) is retried on the next change and on a timer that backs off from
/// ``retryDelays``'s first to its last delay, so a paused daemon whose disk fills and frees
/// again still gets its last change onto the disk, and a `kill -9` then loses nothing.
final class StateKeeper: Sendable {
    /// How often the position is saved while playing.
    static let playingInterval: Double = 5
    /// Seconds before each retry of a failed save; the last one repeats.
    static let retryDelays: [Double] = [1, 2, 4, 8, 16, 30]

    private let store: StateStore
    private let partition: Partition
    private let logger: Logger
    private let writeQueue = DispatchQueue(label: "queueplayerd.state")
    /// What changes as the keeper works; owned by the partition's queue (every access asserts it).
    private struct Keeping {
        var lastSaved: SavedState? = nil
        var inFlight: SavedState? = nil
        var failures: Int = 0
        var lastFailure: String? = nil
        var retryTimer: (any DispatchSourceTimer)? = nil
        var timer: (any DispatchSourceTimer)? = nil
        var isStarted: Bool = false
        var transport: Observation? = nil
    }

    private let keeping: QueueBound<Keeping>

    /// The outputs' switches, saved and restored with the queue.
    private let outputs: QueueBound<AudioOutputs>

    init(store: StateStore, partition: Partition, outputs: AudioOutputs, logger: Logger) {
        self.outputs = partition.bound(outputs)
        self.store = store
        self.partition = partition
        self.logger = logger
        keeping = partition.bound(Keeping())
    }

    // MARK: - Restoring

    /// Loads the saved state, if any, and puts the queue back as it was: the same
    /// item at the same position, playing or paused. Files that vanished are dropped.
    /// Returns false if there was nothing to restore (no usable state, or none of its
    /// files left). Call on the partition's queue.
    func restore() -> Bool {
        switch store.load() {
        case .none:
            return false
        case let .movedAside(reason, path):
            logger.warning("the saved state \(store.file.path) was not used, \(reason); it was moved to \(path)")
            return false
        case let .loaded(state):
            if let saved = state.outputs { outputs.value.restore(saved) }
            // Streams are kept by URL (checked as `add` checks one); files while they exist.
            let (kept, dropped) = state.droppingFiles { entry in
                StreamURL.hasScheme(entry) ? (try? StreamURL.parse(entry)) == nil : !FileManager.default.fileExists(atPath: entry)
            }
            for path in dropped { logger.warning("dropped from the saved queue, it no longer exists: \(path)") }
            if kept.queue.isEmpty && !state.queue.isEmpty {
                logger.warning("none of the saved queue's \(state.queue.count) files exists any more")
                return false
            }
            let urls = kept.queue.map { entry in
                StreamURL.hasScheme(entry) ? (try? StreamURL.parse(entry)) ?? URL(fileURLWithPath: entry) : URL(fileURLWithPath: entry)
            }
            let current = kept.current
            if let modes = state.modes { partition.restore(modes) }
            if let pace = state.pace { partition.pace.configure(PaceSettings(pace)) }
            partition.append(urls)
            restoreRanges(kept.ranges, count: urls.count)
            if let current, current < urls.count {
                partition.startPlayback(at: current, from: state.position, paused: state.paused)
                logger.info("restored the queue (\(urls.count) items) at item \(current + 1), \(String(format: "%.2f", state.position)) s, \(state.paused ? "paused" : "playing")")
            } else {
                logger.info("restored the queue (\(urls.count) items), stopped")
            }
            keeping.lastSaved = snapshot()
            return true
        }
    }

    /// Gives the songs just appended (the last `count` of the queue) their saved ranges; a
    /// range the file no longer has room for (it changed meanwhile) is left out, and logged.
    private func restoreRanges(_ ranges: [[Int]]?, count: Int) {
        guard let ranges, ranges.count == count else { return }
        let entries = partition.playQueue.entries.suffix(count)
        for (entry, saved) in zip(entries, ranges) {
            let range = SongTimeRange(startMilliseconds: saved[0], endMilliseconds: saved[1])
            guard !range.isWhole else { continue }
            do {
                try partition.setRange(range, ofID: entry.id)
            } catch {
                logger.warning("the saved range \(range.protocolText ?? "") of \(entry.song.uri) was not restored: \(error.message)")
            }
        }
    }

    // MARK: - Saving

    /// Starts saving on changes and while playing, each save inside a background task
    /// of the partition's application. Call on the partition's queue.
    func start(events: ControlEvents) {
        keeping.isStarted = true
        // Delivered on the partition's queue once a command's changes are all made, one call for all of them.
        events.subscribe(self) { [self] subsystems in
            if !subsystems.isDisjoint(with: [.playlist, .player, .options, .mixer, .output]) { save() }
        }
        // Audio actually playing: a queue that ran out keeps its rate but plays nothing.
        let player = partition.player
        keeping.transport = player.observe(\.timeControlStatus, options: [.initial, .new]) { [self] _, change in
            let playing = change.newValue == .playing
            partition.perform { [self] _ in setSavesWhilePlaying(playing) }
        }
    }

    /// Saves now, synchronously (the daemon is stopping). Call on the partition's queue.
    func saveBeforeExit() {
        guard keeping.isStarted else { return }
        keeping.timer?.cancel()
        keeping.timer = nil
        keeping.retryTimer?.cancel()
        keeping.retryTimer = nil
        let state = snapshot()
        if let failure = writeQueue.sync(execute: { write(state) }) {
            logger.error("cannot save the state before stopping: \(failure)")
        }
    }

    private func setSavesWhilePlaying(_ playing: Bool) {
        if playing, keeping.timer == nil {
            let timer = partition.makeTimer()
            timer.schedule(deadline: .now() + Self.playingInterval, repeating: Self.playingInterval, leeway: .milliseconds(250))
            timer.setEventHandler { [self] in save() }
            timer.activate()
            keeping.timer = timer
        } else if !playing, let timer = keeping.timer {
            timer.cancel()
            keeping.timer = nil
        }
    }

    private func save() {
        let state = snapshot()
        guard state != keeping.lastSaved, state != keeping.inFlight else { return }
        keeping.inFlight = state
        let activity = partition.application.beginBackgroundActivity(named: "save state")
        writeQueue.async { [self] in
            let failure = write(state)
            partition.perform { [self] _ in
                finished(state, failure: failure)
                activity.end()
            }
        }
    }

    /// Records how a write of `state` ended. On the partition's queue, in the order written.
    private func finished(_ state: SavedState, failure: String?) {
        if keeping.inFlight == state { keeping.inFlight = nil }
        guard let failure else {
            keeping.lastSaved = state
            if keeping.failures > 0 { logger.notice("saved the state again, after \(keeping.failures) failed attempt\(keeping.failures == 1 ? "" : "s")") }
            keeping.failures = 0
            keeping.lastFailure = nil
            keeping.retryTimer?.cancel()
            keeping.retryTimer = nil
            return
        }
        keeping.failures += 1
        if failure != keeping.lastFailure {
            logger.error("cannot save the state: \(failure); retrying")
            keeping.lastFailure = failure
        }
        scheduleRetry()
    }

    /// One retry, after the delay for the number of failures so far.
    private func scheduleRetry() {
        keeping.retryTimer?.cancel()
        let delay = Self.retryDelays[min(keeping.failures, Self.retryDelays.count) - 1]
        let timer = partition.makeTimer()
        timer.schedule(deadline: .now() + delay, leeway: .milliseconds(100))
        timer.setEventHandler { [self] in
            keeping.retryTimer = nil
            save()
        }
        timer.activate()
        keeping.retryTimer = timer
    }

    /// Writes `state`; what went wrong, if anything. On the write queue.
    private func write(_ state: SavedState) -> String? {
        do {
            try store.save(state)
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func snapshot() -> SavedState {
        partition.syncWithPlayer()
        let position = partition.currentPosition
        let queue = partition.playQueue
        return SavedState(queue: partition.playQueue.entries.map { $0.song.isStream ? $0.song.url.absoluteString : $0.song.url.path },
                          current: position,
                          // A live stream resumes from its live edge: no position into it.
                          position: position != nil && partition.player.currentItem?.isLive != true ? partition.songTime : 0,
                          paused: partition.playState != .play,
                          modes: SavedState.Modes(repeats: queue.repeats, random: queue.random, single: queue.single.rawValue,
                                                  consume: queue.consume.rawValue, volume: partition.volume,
                                                  replayGain: partition.gains.mode.rawValue),
                          outputs: outputs.value.savedSwitches,
                          ranges: Self.ranges(of: queue),
                          pace: partition.pace.settings.saved)
    }

    /// The queue's ranges as the saved state keeps them; nil when no song has one.
    private static func ranges(of queue: PlayQueue<QueuedSong>) -> [[Int]]? {
        guard queue.entries.contains(where: { !$0.song.range.isWhole }) else { return nil }
        return queue.entries.map { [$0.song.range.startMilliseconds, $0.song.range.endMilliseconds] }
    }
}

import Foundation
import Logging
import QueuePlayer
import Synchronization

/// Follows the chapter heard: a boundary time observer at the current item's chapter starts
/// (made anew for each item), and a check when the item changes or the partition asks
/// (``check()``, after a seek: a boundary observer is not called for a jump). Each change of
/// chapter (the index, or nil in a gap, after the last or without chapters) is handed to
/// `changed` once, on the follower's queue: the daemon prints `Chapter: <title>`, posts `idle
/// player` and the WebSocket's `chapter` event there.
///
/// The observers are added and removed on a queue of its own and called on another: removing
/// one waits for its running call, which may wait for the player's control queue, so neither
/// happens on the player's queue (where `currentItem`'s observation runs) nor on each other's.
package final class ChapterFollower: Sendable {
    /// What changed: the item and its chapter's index (nil: none heard); `newItem` when the
    /// item is not the one of the last call (its chapter list is new).
    package typealias Change = @Sendable (_ item: PlayerItem, _ index: Int?, _ newItem: Bool) -> Void

    private struct State {
        var item: PlayerItem?
        var index: Int?
        var token: TimeObserverToken?
        var observation: Observation?
        var isRunning = false
    }

    private let player: QueuePlayer
    private let logger: Logger
    private let changed: Change
    /// Where observers are added and removed.
    private let observers = DispatchQueue(label: "queueplayerd.chapters.observers")
    /// Where the boundary observer's block and ``check()`` run, in order.
    private let calls = DispatchQueue(label: "queueplayerd.chapters")
    private let state = Mutex(State())

    package init(player: QueuePlayer, logger: Logger, changed: @escaping Change) {
        self.player = player
        self.logger = logger
        self.changed = changed
    }

    /// Starts following (the current item at once).
    package func start() {
        state.withLock { $0.isRunning = true }
        let observation = player.observe(\.currentItem, options: [.initial, .new]) { [weak self] _, change in
            guard let self else { return }
            let item = change.newValue ?? nil
            observers.async { self.follow(item) }
        }
        state.withLock { $0.observation = observation }
    }

    /// Stops following: no call of `changed` starts once this returns.
    func stop() {
        let (observation, token) = state.withLock { state in
            defer { state.observation = nil; state.token = nil; state.item = nil; state.isRunning = false }
            return (state.observation, state.token)
        }
        observation?.invalidate()
        observers.sync { if let token { player.removeTimeObserver(token) } }
        calls.sync {}
    }

    /// Looks again at which chapter is heard (after a seek).
    package func check() {
        calls.async { [self] in update() }
    }

    /// On ``observers``: a boundary observer at `item`'s chapter starts in place of the last item's.
    private func follow(_ item: PlayerItem?) {
        let old = state.withLock { state -> TimeObserverToken? in
            defer { state.token = nil }
            return state.token
        }
        if let old { player.removeTimeObserver(old) }
        guard state.withLock({ $0.isRunning }) else { return }
        guard let item else {
            calls.async { [self] in update() }
            return
        }
        for problem in item.chapterProblems { logger.warning("chapters of \(item.url.path): \(problem); skipped") }
        let starts = item.chapters.map(\.start).filter { $0 > 0 }
        if !starts.isEmpty {
            let token = player.addBoundaryTimeObserver(forTimes: starts.map { MediaTime(seconds: $0) }, queue: calls) { [weak self] in
                self?.update()
            }
            state.withLock { $0.token = token }
        }
        calls.async { [self] in update() }
    }

    /// On ``calls``: hands on the chapter heard if it is not the one last handed on.
    private func update() {
        let item = player.currentItem
        let index = item.flatMap { item in player.currentChapter().map(\.index) }
        let news = state.withLock { state -> (isNew: Bool, newItem: Bool) in
            guard state.isRunning, state.item !== item || state.index != index else { return (false, false) }
            defer { (state.item, state.index) = (item, index) }
            return (true, state.item !== item)
        }
        if news.isNew, let item { changed(item, index, news.newItem) }
    }
}

import Dispatch
import MPDProtocol
import QueuePlayer

/// The sleep timer (`sleep SECONDS|end|chapter|off`): playback pauses after a number of
/// seconds, or where the item (or its chapter) being heard ends, its last ``fadeLength``
/// seconds faded out (all of a shorter timer). The fade is the player's ``QueuePlayer/fadeVolume``,
/// a factor of its own multiplied into the software volume, so the volume a client set is never
/// changed, and the factor is back at 1 once the player has paused (or the timer is cancelled):
/// the next `play` is heard at the volume it was.
///
/// It wakes only while set: once when the fade is due (at most every ``recheck`` seconds while
/// waiting for an item's end, which a seek or the rate moves), then every ``fadeStep`` seconds
/// while it fades. `pause` and `stop` cancel it (``cancel()``); setting and cancelling post
/// `options`. Confined to the partition's queue (`QueueBound`); its timer runs there.
package final class SleepTimer: Sendable {
    /// What the timer waits for.
    enum Target: Equatable {
        /// An uptime (nanoseconds, `DispatchTime`), and the fade's length for it.
        case deadline(UInt64, fade: Double)
        /// The end of the item being heard.
        case itemEnd
        /// The end of the chapter being heard.
        case chapterEnd
    }

    /// Seconds faded out before the pause.
    static let fadeLength = 10.0
    /// Seconds between two fade steps.
    static let fadeStep = 0.05
    /// Seconds between two looks at an item's end while the fade is not due.
    static let recheck = 5.0

    private struct State {
        var target: Target?
        var timer: (any DispatchSourceTimer)?
        /// For ``Target/chapterEnd``: the chapter heard when the timer was set, by its item and
        /// index, so that its end stays the target once the time is past it (the next chapter heard).
        var chapter: (item: ObjectIdentifier, index: Int)?
    }

    private let state: QueueBound<State>
    private let player: QueuePlayer
    private let events: ControlEvents
    private let queue: DispatchQueue
    /// Pauses playback (the partition's way, as the `pause` command does).
    private let pause: @Sendable () -> Void
    /// The factor is put back once the player no longer plays.
    private let restoreWatch: QueueBound<Any?>

    init(player: QueuePlayer, events: ControlEvents, queue: DispatchQueue, pause: @escaping @Sendable () -> Void) {
        self.player = player
        self.events = events
        self.queue = queue
        self.pause = pause
        state = QueueBound(State(), on: queue)
        restoreWatch = QueueBound(nil, on: queue)
    }

    /// What the timer waits for; nil when none is set.
    var target: Target? { state.value.target }

    /// True while the timer waits for the item's end: the player pauses there (the action at item end).
    var pausesAtItemEnd: Bool { state.value.target == .itemEnd }

    /// `status`'s `sleep`: whole seconds left (rounded up), or `end`, `chapter`; nil when none is set.
    var statusValue: String? {
        switch state.value.target {
        case nil: nil
        case .deadline(let deadline, _): String(Int((Double(deadline &- min(deadline, DispatchTime.now().uptimeNanoseconds)) / 1e9).rounded(.up)))
        case .itemEnd: "end"
        case .chapterEnd: "chapter"
        }
    }

    /// Sets the timer (replacing one set before), or cancels it (`off`). `playing`: whether the
    /// partition plays; a timer needs it (`Not playing` otherwise).
    func set(_ request: SleepRequest, playing: Bool) throws(MPDError) {
        let target: Target
        switch request {
        case .off:
            return cancel()
        case .seconds(let seconds):
            target = .deadline(DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9), fade: min(seconds, Self.fadeLength))
        case .end:
            target = .itemEnd
        case .chapter:
            target = .chapterEnd
        }
        guard playing else { throw MPDError(.playerSync, "Not playing: a sleep timer needs something playing") }
        var chapter: (item: ObjectIdentifier, index: Int)?
        if case .chapterEnd = target {
            guard let item = player.currentItem, let heard = player.currentChapter() else {
                throw MPDError(.noExist, "no chapters: the item being heard has none")
            }
            chapter = (ObjectIdentifier(item), heard.index)
        }
        player.fadeVolume = 1
        state.value.target = target
        state.value.chapter = chapter
        schedule()
        events.post([.options])
    }

    /// Cancels a timer (`pause`, `stop`, `sleep off`): the fade is undone at once.
    func cancel() {
        guard state.value.target != nil else { return }
        finish()
        player.fadeVolume = 1
        events.post([.options])
    }

    /// The item being heard ended under ``pausesAtItemEnd``: the partition paused there.
    func itemEndReached() {
        guard state.value.target == .itemEnd else { return }
        finish()
        restoreOncePaused()
        events.post([.options])
    }

    // MARK: - Counting down

    /// Seconds until the pause, as far as can be told now; nil when it cannot (an item without
    /// a length: no fade, the pause comes at its end).
    private func remaining() -> (seconds: Double, fade: Double)? {
        switch state.value.target {
        case nil:
            return nil
        case .deadline(let deadline, let fade):
            let now = DispatchTime.now().uptimeNanoseconds
            return (Double(deadline &- min(deadline, now)) / 1e9, fade)
        case .itemEnd:
            guard let duration = player.currentItem?.duration?.seconds else { return nil }
            return (wall(duration - player.currentTime().seconds), Self.fadeLength)
        case .chapterEnd:
            guard let end = chapterBoundary() else { return nil }
            return (wall(end - player.currentTime().seconds), Self.fadeLength)
        }
    }

    /// Seconds of the item's time as wall-clock seconds at the player's rate.
    private func wall(_ seconds: Double) -> Double {
        let rate = Double(player.rate)
        return max(0, rate > 0 ? seconds / rate : seconds)
    }

    /// Where the chapter heard when the timer was set ends, seconds into the item; nil once
    /// another item plays. The one place chapters are read.
    private func chapterBoundary() -> Double? {
        guard let chapter = state.value.chapter, let item = player.currentItem, ObjectIdentifier(item) == chapter.item else {
            return nil
        }
        let chapters = item.chapters
        return chapter.index < chapters.count ? chapters[chapter.index].end : nil
    }

    /// Fades by what is left, then sleeps until the next look (or pauses when the time is up).
    private func step() {
        guard let target = state.value.target else { return }
        guard let (left, fade) = remaining() else {
            // No length known: no fade; an item end still pauses (the action at item end).
            player.fadeVolume = 1
            return arm(after: Self.recheck)
        }
        if left <= 0, target != .itemEnd {
            player.fadeVolume = 0
            finish()
            pause()
            restoreOncePaused()
            events.post([.player, .options])
            return
        }
        player.fadeVolume = Float(min(1, max(0, left / max(fade, Self.fadeStep))))
        // An item's end moves with seeks and the rate: looked at again now and then.
        let movable = target == .itemEnd || target == .chapterEnd
        if left > fade { return arm(after: movable ? min(left - fade, Self.recheck) : left - fade) }
        arm(after: left > 0 ? min(Self.fadeStep, left) : Self.fadeStep)
    }

    private func schedule() {
        state.value.timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.step() }
        state.value.timer = timer
        timer.schedule(deadline: .now())
        timer.activate()
    }

    private func arm(after seconds: Double) {
        state.value.timer?.schedule(deadline: .now() + max(0.001, seconds))
    }

    private func finish() {
        state.value.timer?.cancel()
        state.value = State()
    }

    /// The fade stays at 0 until the player has paused (nothing written meanwhile is heard
    /// loud), then goes back to 1 for the next `play`.
    private func restoreOncePaused() {
        restoreWatch.value = player.observe(\.timeControlStatus, options: [.initial, .new]) { [weak self] player, change in
            guard change.newValue != .playing else { return }
            player.fadeVolume = 1
            guard let self else { return }
            queue.async { self.restoreWatch.value = nil }
        }
    }
}

import DaemonState
import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Synchronization

/// MPD's partition: the play queue (``PlayQueue``: ids, versions, modes, what comes next),
/// the player handle (``QueuePlayer``), the mixer (the software volume), the options and the
/// announcements played over the queue, with one owner: the partition's serial queue. What
/// the daemon has once (the library, stickers, access, feeds, outputs' switches...) is the
/// ``Instance``'s; commands reach the partition through the narrow sides they use
/// (``CommandDispatcher``).
///
/// The player holds at most two items: the song being heard and the one that follows it
/// (the look-ahead, which its render thread decodes ahead of time for the gapless
/// hand-over). The queue decides which song follows — in order, shuffled, repeated, or
/// none in single mode — so every mode keeps the hand-over sample-exact, and a mode changed
/// in mid-song takes effect at the next boundary, when the look-ahead is replaced.
///
/// When the player moves on by itself, the partition learns it by observing `currentItem`
/// and, like MPD's `SyncWithPlayer`, by checking the player before every command: a song
/// that started is then `songStarted` in the queue (consume, one-shot modes, priorities).
///
/// Confined to its queue: code outside enters it with ``perform(_:)`` or ``run(_:)``, which
/// first bring it up to date with the player (MPD's `SyncWithPlayer`); the state that matters
/// lives in ``State``, whose every access asserts the queue (`QueueBound`).
/// `@unchecked Sendable`: the remaining stored properties are `let`s (``AudioOutputs`` is read on
/// the partition's queue only).
package final class Partition: @unchecked Sendable {
    package enum PlayState: String { case play, pause, stop }

    /// An item handed to the player, and the queue entry it plays.
    private struct Handoff {
        let item: PlayerItem
        let id: Int
    }

    /// The partition's owner: every method below runs here.
    package let queue: PartitionQueue
    package let player: QueuePlayer
    /// Each item's own gain: the ReplayGain mode (`replay_gain_mode`) and the loudness target.
    package let gains: ItemGains
    /// When the partition was made (the daemon's start), on the player's clock.
    private let startedAt: UInt64
    /// The library's side: a URL into the song the queue keeps (the instance's library and song index).
    private let songs: SongLookup
    private let events: ControlEvents
    private let logger: Logger
    /// The audio outputs: with none enabled the player holds its place.
    private let outputs: AudioOutputs
    /// The application the partition runs in (the daemon's life cycle): commands that need
    /// the player wake it, and a kept `status` waits for its state to be steady.
    private let application: any ApplicationContext
    /// What is remembered of the items heard (`elapsed`, the play statistics); nil: nothing.
    package let memory: PlaybackMemory?
    /// `sleep`: the pause after a while, or at the item's end.
    package let sleepTimer: SleepTimer
    /// The playback rate, pitch algorithm and skip silence, and feeds' rates (``PlaybackPace``).
    package let pace: PlaybackPace

    /// What changes as the partition works; every access asserts the partition's queue.
    private struct State {
        var playQueue = PlayQueue<QueuedSong>()
        var nowPlaying: Handoff?
        var lookahead: Handoff?
        var volume = 100
        var mixrampdb = 0.0
        var playTime = PlayTimeMeter()
        var lastError: String?
        var consecutiveFailures = 0
        var observations: [Any] = []
        var announcement: Announcement?
    }

    /// A region's announcement playing in place of the queue: what it interrupted,
    /// to resume it there, and the announcements waiting behind it.
    private struct Announcement {
        var item: PlayerItem
        /// The queue entry that was being heard, and where; nil: nothing was.
        var resume: (id: Int, seconds: Double, paused: Bool)?
        var waiting: [URL] = []
    }

    private let state: QueueBound<State>

    /// The songs, their ids and versions, the play modes: the partition's playlist.
    package private(set) var playQueue: PlayQueue<QueuedSong> {
        get { state.value.playQueue }
        _modify { yield &state.value.playQueue }
        set { state.value.playQueue = newValue }
    }
    private var nowPlaying: Handoff? {
        get { state.value.nowPlaying }
        set {
            let old = state.value.nowPlaying
            state.value.nowPlaying = newValue
            publishHandoffs()
            if old?.item !== newValue?.item { heardItemChanged(from: old, to: newValue) }
        }
    }
    private var lookahead: Handoff? {
        get { state.value.lookahead }
        set {
            state.value.lookahead = newValue
            publishHandoffs()
        }
    }
    /// The song ids of the (at most two) items handed to the player, readable from any thread:
    /// a time observer's block, on the clock thread, names the song it reports without entering
    /// the partition's queue (the WebSocket's pushed ticks).
    private let handoffIDs = Mutex<[ObjectIdentifier: Int]>([:])

    private func publishHandoffs() {
        var ids: [ObjectIdentifier: Int] = [:]
        for handoff in [state.value.nowPlaying, state.value.lookahead].compactMap({ $0 }) {
            ids[ObjectIdentifier(handoff.item)] = handoff.id
        }
        handoffIDs.withLock { $0 = ids }
    }

    /// The queue entry's id (`songid`) that `item` plays, if the partition handed it to the
    /// player and still holds it; from any thread.
    package func songID(of item: PlayerItem) -> Int? {
        handoffIDs.withLock { $0[ObjectIdentifier(item)] }
    }
    /// True while some output is enabled; with none, the player holds its place (paused).
    package var outputEnabled: Bool { outputs.anyEnabled }
    /// The software mixer's volume, 0 to 100 (`setvol`); 100 leaves the audio bit-exact.
    package private(set) var volume: Int {
        get { state.value.volume }
        set { state.value.volume = newValue }
    }
    /// `mixrampdb`: kept and reported; MixRamp itself is off while `mixrampdelay` is `nan`.
    package var mixrampdb: Double {
        get { state.value.mixrampdb }
        set { state.value.mixrampdb = newValue }
    }
    /// The last item failure, reported in `status` as `error`.
    package var lastError: String? {
        get { state.value.lastError }
        set {
            state.value.lastError = newValue
            events.statusSnapshot.invalidate()
        }
    }
    /// Songs that failed one after another; at a queue's worth, playback stops instead of
    /// trying them all again (mpd's `error_count`).
    private var consecutiveFailures: Int {
        get { state.value.consecutiveFailures }
        set { state.value.consecutiveFailures = newValue }
    }

    /// - Parameters:
    ///   - songs: the songs' URIs and details, from the instance's library and song index.
    ///   - application: the daemon's life cycle; always active when there is none (tests).
    package init(queue: PartitionQueue, player: QueuePlayer, songs: SongLookup, events: ControlEvents,
         outputs: AudioOutputs, application: any ApplicationContext = AlwaysActiveContext(), memory: PlaybackMemory? = nil,
         logger: Logger) {
        self.queue = queue
        self.player = player
        gains = ItemGains(player: player)
        self.songs = songs
        self.events = events
        self.outputs = outputs
        self.application = application
        self.memory = memory
        self.logger = logger
        state = queue.bound(State())
        sleepTimer = SleepTimer(player: player, events: events, queue: queue.dispatchQueue) { [weak player] in player?.pause() }
        pace = PlaybackPace(player: player, events: events, queue: queue.dispatchQueue)
        startedAt = player.clock.now()
        // On the queue, where the tokens are kept; before any work the daemon queues there.
        queue.async { [self] in observePlayer() }
    }

    // MARK: - Entering the partition

    /// Runs `body` on the partition's queue, once the partition has caught up with the player.
    package func perform(_ body: @escaping @Sendable (Partition) -> Void) {
        queue.async { [self] in
            syncWithPlayer()
            body(self)
        }
    }

    /// Runs `body` on the partition's queue and returns its result, suspending the caller
    /// (never blocking a thread).
    package func run<Result: Sendable>(_ body: @escaping @Sendable (Partition) -> Result) async -> Result {
        await withCheckedContinuation { (done: CheckedContinuation<Result, Never>) in
            perform { done.resume(returning: body($0)) }
        }
    }

    /// Follows the player: songs that start, end or fail by themselves.
    private func observePlayer() {
        var observations: [Any] = []
        observations.append(player.observe(\.currentItem, options: [.new]) { [weak self] _, _ in
            guard let self else { return }
            queue.async {
                self.syncWithPlayer()
                self.pace.follow(self.player.currentItem)
            }
        })
        // Timed where the player changes (its control queue), counted on the partition's queue, in order.
        observations.append(player.observe(\.timeControlStatus, options: [.initial, .new]) { [weak self] player, change in
            guard let self else { return }
            let (isPlaying, now) = (change.newValue == .playing, player.clock.now())
            queue.async { self.state.value.playTime.update(isPlaying: isPlaying, at: now) }
        })
        let center = NotificationCenter.default
        observations.append(center.addObserver(forName: PlayerItem.didPlayToEndTimeNotification, object: nil, queue: nil) { [weak self] note in
            guard let self, let item = note.object as? PlayerItem else { return }
            queue.async { self.itemDidPlayToEnd(item) }
        })
        observations.append(center.addObserver(forName: PlayerItem.failedToPlayToEndTimeNotification, object: nil, queue: nil) { [weak self] note in
            guard let self, let item = note.object as? PlayerItem else { return }
            queue.async { self.itemFailed(item) }
        })
        if memory != nil {
            // Where the item is heard, for its place and statistics (``PlaybackMemory``).
            observations.append(player.addPeriodicTimeObserver(forInterval: MediaTime(seconds: 1), queue: queue.dispatchQueue) { [weak self] time in
                self?.heardAt(time.seconds)
            })
        }
        state.value.observations = observations
    }

    // MARK: - What is remembered of the items heard

    /// The player's periodic time: the memory hears the queue's item, not an announcement's.
    private func heardAt(_ seconds: Double) {
        guard state.value.announcement == nil, let playing = nowPlaying, player.currentItem === playing.item else { return }
        memory?.heard(playing.item, at: seconds)
    }

    private func heardItemChanged(from old: Handoff?, to new: Handoff?) {
        guard let memory else { return }
        if let old { memory.ended(old.item) }
        if let new, let position = playQueue.position(ofID: new.id) {
            memory.began(new.item, uri: playQueue.entries[position].song.uri)
        }
    }

    /// A command is about to take the item heard away: the memory learns where it was left.
    private func noteLeaving() {
        guard let memory, let playing = nowPlaying, state.value.announcement == nil,
              player.currentItem === playing.item else { return }
        memory.leaving(playing.item, at: player.currentTime().seconds)
    }

    /// Where `play` starts the song at `position` from its start: its kept place less the
    /// rewind, or 0.
    package func resumePoint(at position: Int) -> Double {
        guard position >= 0, position < playQueue.count else { return 0 }
        return memory?.resumePoint(of: playQueue.entries[position].song.uri) ?? 0
    }

    /// The daemon stops: the item heard keeps its place (an announcement's interrupted song where it resumes).
    package func saveMemoryBeforeExit() {
        guard let memory, let playing = nowPlaying else { return }
        if let resume = state.value.announcement?.resume, resume.id == playing.id {
            memory.saveBeforeExit(playing.item, at: resume.seconds)
        } else if player.currentItem === playing.item {
            memory.saveBeforeExit(playing.item, at: player.currentTime().seconds)
        }
    }

    // MARK: - What the daemon itself uses

    /// Appends files to the queue.
    package func append(_ urls: [URL]) {
        // Entered from outside the commands (the state, the downloads, a region): first caught up with the player.
        syncWithPlayer()
        guard !urls.isEmpty else { return }
        for url in urls { playQueue.insert(song(for: url)) }
        queueChanged()
    }

    /// Starts playing the song at `position`, `seconds` into it, or holds it there paused.
    package func startPlayback(at position: Int, from seconds: Double = 0, paused: Bool = false) {
        guard position >= 0, position < playQueue.count else { return }
        noteLeaving()
        consecutiveFailures = 0
        state.value.announcement = nil
        player.removeAllItems()
        if seconds > 0 || paused { player.pause() }
        let entry = playQueue.entries[position]
        let item = ChapterSource.item(for: entry.song, logger: logger)
        pace.prepare(item)
        nowPlaying = Handoff(item: item, id: entry.id)
        lookahead = nil
        playQueue.makeCurrent(position)
        if entry.priority != 0 { playQueue.setPriority(0, for: position..<position + 1) }
        player.insert(item, after: nil)
        scheduleLookahead()
        if seconds > 0 { player.seek(to: MediaTime(seconds: seconds)) }
        pace.follow(item)
        if outputEnabled && !paused { player.play() } else { player.pause() }
        events.post([.player])
    }

    /// Seconds into the queue's current song: where the player is, or, while an announcement
    /// plays over it, where the song resumes (what the saved state keeps).
    package var songTime: Double {
        state.value.announcement?.resume?.seconds ?? player.currentTime().seconds
    }

    /// The queued files, in order.
    var queuedFiles: [URL] { playQueue.entries.map(\.song.url) }

    /// The queue position of the song the player is on (nil when stopped), as of the last
    /// ``syncWithPlayer()`` (every entry into the partition makes one).
    package var currentPosition: Int? {
        nowPlaying.flatMap { playQueue.position(ofID: $0.id) }
    }

    /// The queue's current song, also when stopped (`song:` in `status`).
    package var selectedPosition: Int? {
        playQueue.currentPosition
    }

    /// Seconds the player has been playing since the daemon started (`playtime` in `stats`,
    /// as mpd counts it: ``PlayTimeMeter``).
    package var playedSeconds: Double {
        state.value.playTime.seconds(at: player.clock.now())
    }

    /// Seconds since the daemon started (`uptime` in `stats`), on the player's clock (monotonic).
    package var uptime: Int {
        Int((player.clock.now() &- startedAt) / 1_000_000_000)
    }

    /// What a kept `status` or `currentsong` depends on that changes on the player's threads.
    /// Any thread: it reads only the player's published state.
    package var playerConditions: StatusSnapshot.Conditions {
        StatusSnapshot.Conditions(item: player.currentItem, timeControlStatus: player.timeControlStatus,
                                  waitingReason: player.reasonForWaitingToPlay)
    }

    /// Renders a `status` or `currentsong` reply, and keeps it for the event loop while it
    /// cannot change by itself but for the elapsed time: stopped, or (`status`) playing, no
    /// background time counting down (``StatusSnapshot``).
    package func reply(keeping kind: StatusSnapshot.Kind, _ render: () -> Reply) -> Reply {
        let snapshot = events.statusSnapshot
        let epoch = snapshot.epoch
        let conditions = playerConditions
        let reply = render()
        // A sleep timer's `sleep` counts down: not kept.
        guard application.statusFieldsAreSteady, sleepTimer.target == nil else { return reply }
        switch playState {
        case .stop:
            snapshot.store(kind, reply.rendered(), conditions: conditions, epoch: epoch)
        // With skip silence, `silenceskipped` grows by itself: such a `status` is not kept.
        case .play where kind == .status && conditions.timeControlStatus == .playing && !pace.settings.skipsSilence:
            guard let item = conditions.item, player.currentItem === item else { break }
            snapshot.storePlaying(status: reply.rendered(), item: item, duration: item.duration?.seconds ?? 0,
                                  conditions: conditions, epoch: epoch)
        default:
            break
        }
        return reply
    }

    package var playState: PlayState {
        guard currentPosition != nil else { return .stop }
        return player.rate == 0 ? .pause : .play
    }

    // MARK: - Transport

    /// Stops: the player is emptied, the queue keeps its current song. Stopping playback
    /// draws a new random order (``PlayQueue/stopped()``) unless `reshuffling` is false (a
    /// removal that leaves nothing to play stops the player without stopping the playlist, as
    /// in mpd).
    package func stop(reshuffling: Bool = true) {
        syncWithPlayer()
        noteLeaving()
        cancelSleep()
        if nowPlaying != nil && reshuffling { playQueue.stopped() }
        state.value.announcement = nil
        nowPlaying = nil
        lookahead = nil
        player.removeAllItems()
        player.pause()
        events.post([.player])
    }

    /// `next`: the song that follows in play order (single mode aside, as with mpd: the user
    /// wants another song), or stop at the end of the queue with no current song.
    package func next() throws(MPDError) {
        guard let position = currentPosition, let playing = nowPlaying else { throw MPDError.notPlaying }
        application.commandNeedsPlayer()
        let single = playQueue.single
        defer { if playQueue.single != single { playQueue.setSingle(single); scheduleLookahead() } }
        // Chosen as the look-ahead is (a random order that wraps around is drawn anew, as mpd's
        // `PlayNext` does), with single mode off for the choice.
        playQueue.setSingle(.off)
        let following = playQueue.chooseNext()
        playQueue.setSingle(single)
        guard let following else {
            consumeIfNeeded(position)
            stop()
            playQueue.makeCurrent(nil)
            return
        }
        let followingID = playQueue.entries[following].id
        if lookahead?.id == followingID {
            // Onto the look-ahead the player already holds: removing the song being heard
            // moves on only if it still is (the player may have moved on by itself).
            noteLeaving()
            player.remove(playing.item)
            syncWithPlayer()
        } else {
            consumeIfNeeded(position)
            if let at = playQueue.position(ofID: followingID) { startPlayback(at: at) }
        }
        // As mpd does, moving to another song plays it.
        if outputEnabled { player.play() }
    }

    /// `previous`: the song before in play order (see ``PlayQueue/previousPosition``).
    package func previous() throws(MPDError) {
        guard currentPosition != nil, let previous = playQueue.previousPosition else { throw MPDError.notPlaying }
        application.commandNeedsPlayer()
        startPlayback(at: previous)
    }

    /// `seek`/`seekid`: `seconds` into the song at `position`, playing it if it is not current.
    package func seek(position: Int, seconds: Double) throws(MPDError) {
        guard position < playQueue.count else { throw MPDError.badSongIndex }
        application.commandNeedsPlayer()
        if position == currentPosition, let duration = player.currentItem?.duration?.seconds {
            player.seek(to: MediaTime(seconds: min(seconds, duration)))
            events.post([.player])
        } else {
            startPlayback(at: position, from: seconds, paused: playState == .pause)
        }
    }

    // MARK: - Announcements

    /// Plays `file` over the queue (a region entered): the song being heard pauses where it is
    /// audible, the announcement plays, then the song resumes from that time, by a seek, which
    /// is sample-exact. The queue itself is not changed; one announcement asked for while
    /// another plays follows it. A transport command meanwhile (`play`, `stop`, `next`...) ends it.
    /// The caller has woken a suspended daemon for it (``LocationService``'s wake).
    package func announce(_ file: URL, for name: String) {
        // Entered from outside the commands (the state, the downloads, a region): first caught up with the player.
        syncWithPlayer()
        if state.value.announcement != nil {
            state.value.announcement?.waiting.append(file)
            return
        }
        syncWithPlayer()
        var resume: (id: Int, seconds: Double, paused: Bool)?
        if let playing = nowPlaying, playQueue.position(ofID: playing.id) != nil {
            // Where the listener stops hearing the song: all that was written, with a FIFO output.
            resume = (playing.id, player.interruptionTime().seconds, playState == .pause)
            // The song is left here for the memory: its item will not be heard again.
            memory?.leaving(playing.item, at: player.interruptionTime().seconds)
        }
        startAnnouncement(Announcement(item: PlayerItem(url: file), resume: resume))
        logger.info("announcing \(name): \(file.lastPathComponent)\(resume.map { String(format: " (the queue resumes at %.3f s)", $0.seconds) } ?? "")")
    }

    private func startAnnouncement(_ announcement: Announcement) {
        state.value.announcement = announcement
        player.removeAllItems()
        lookahead = nil
        player.actionAtItemEnd = .pause
        player.insert(announcement.item, after: nil)
        if outputEnabled { player.play() }
        events.post([.player])
    }

    /// The announcement played (or failed): the next one waiting, or the queue where it was.
    private func announcementDidEnd(_ announcement: Announcement) {
        var rest = announcement
        if !rest.waiting.isEmpty {
            let next = rest.waiting.removeFirst()
            return startAnnouncement(Announcement(item: PlayerItem(url: next), resume: rest.resume, waiting: rest.waiting))
        }
        state.value.announcement = nil
        player.removeAllItems()
        guard let resume = announcement.resume, let position = playQueue.position(ofID: resume.id) else {
            nowPlaying = nil
            lookahead = nil
            player.pause()
            events.post([.player])
            return
        }
        // As `seek` does: the song from the time it was left at, paused if it was.
        startPlayback(at: position, from: resume.seconds, paused: resume.paused)
    }

    /// `sleep`: sets the sleep timer (or cancels it); one that waits for the item's end makes
    /// the player pause there.
    package func setSleep(_ request: SleepRequest) throws(MPDError) {
        try sleepTimer.set(request, playing: playState == .play)
        applyActionAtItemEnd()
    }

    /// Cancels a sleep timer (`pause`, `stop`): the player no longer pauses at the item's end for it.
    package func cancelSleep() {
        sleepTimer.cancel()
        applyActionAtItemEnd()
    }

    /// What the player does at an item's end: pause there in single mode or for a sleep timer
    /// waiting for it, else go on.
    private func applyActionAtItemEnd() {
        player.actionAtItemEnd = playQueue.stopsAtSongEnd || sleepTimer.pausesAtItemEnd ? .pause : .advance
    }

    // MARK: - Changing the queue

    /// Inserts `urls` at `position` (the end when nil); returns their ids.
    @discardableResult
    package func insert(_ urls: [URL], at position: Int?) -> [Int] {
        var ids: [Int] = []
        for (offset, url) in urls.enumerated() {
            ids.append(playQueue.insert(song(for: url), at: position.map { $0 + offset }))
        }
        queueChanged()
        return ids
    }

    /// Removes the songs at `range`. Removing the song being heard moves on to the one that
    /// followed it, as mpd does (or stops when none is left).
    package func remove(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        let current = currentPosition
        var successor: Int?
        if let current, range.contains(current) {
            var candidate = playQueue.nextPosition
            var steps = 0
            while let position = candidate, range.contains(position), steps < playQueue.count {
                candidate = nextPosition(after: position)
                steps += 1
            }
            successor = candidate.flatMap { range.contains($0) ? nil : $0 }
        }
        let successorID = successor.map { playQueue.entries[$0].id }
        let wasPaused = playState == .pause
        playQueue.remove(range)
        queueChanged()
        if let current, range.contains(current) {
            let successorPosition = successorID.flatMap { playQueue.position(ofID: $0) }
            if let position = successorPosition, !wasPaused {
                startPlayback(at: position)
            } else {
                // Paused (or nothing follows): mpd stops, its current song the one that followed.
                stop(reshuffling: false)
                playQueue.makeCurrent(successorPosition)
            }
        }
    }

    /// Removes every entry that plays `file` but the current one (a podcast episode that
    /// `--download-limit` deleted), last first so the positions stay valid.
    package func removeAll(playing file: URL) {
        // Entered from outside the commands (the state, the downloads, a region): first caught up with the player.
        syncWithPlayer()
        let current = currentPosition
        for position in playQueue.entries.indices.reversed()
        where position != current && playQueue.entries[position].song.url.standardizedFileURL == file {
            remove(position..<position + 1)
        }
    }

    /// Empties the queue and stops.
    package func clear() {
        playQueue.removeAll()
        stop()
        queueChanged()
    }

    /// Changes the queue in ways that leave the song being heard where it is (moves, swaps,
    /// priorities, shuffles), then renews the look-ahead.
    package func edit(_ body: (inout PlayQueue<QueuedSong>) throws(MPDError) -> Void) throws(MPDError) {
        syncWithPlayer()
        try body(&playQueue)
        queueChanged()
    }

    /// `rangeid`: the part of the song with `id` that plays (MPD's `SetSongIdRange`). The song
    /// being heard cannot be edited; an end at or past the song's end means its end; the song
    /// handed to the player to follow is handed again, cut anew.
    package func setRange(_ range: SongTimeRange, ofID id: Int) throws(MPDError) {
        syncWithPlayer()
        let position = try position(ofID: id)
        if playState != .stop, position == currentPosition {
            throw MPDError(.permission, "Cannot edit the current song")
        }
        var range = range
        if let duration = playQueue.entries[position].song.details?.duration {
            let milliseconds = Int(duration * 1000)
            guard range.startMilliseconds <= milliseconds else { throw MPDError(.argument, "Invalid start offset") }
            if range.endMilliseconds >= milliseconds { range.endMilliseconds = 0 }
        }
        if let lookahead, lookahead.id == id {
            player.remove(lookahead.item)
            self.lookahead = nil
        }
        playQueue.update(at: position) { $0.range = range }
        queueChanged()
    }

    /// `addtagid`, `cleartagid`: changes the tags of the queued stream with `id` (MPD's
    /// `AddSongIdTag`, `ClearSongIdTag`): clients may know a remote song better than it says
    /// itself. A file's tags are the file's, and mpd refuses to edit them.
    package func editTags(ofID id: Int, _ body: (inout [SongInfo.Tag]) -> Void) throws(MPDError) {
        syncWithPlayer()
        let position = try position(ofID: id)
        guard playQueue.entries[position].song.isStream else {
            throw MPDError(.permission, "Cannot edit tags of local file")
        }
        playQueue.update(at: position) { body(&$0.editedTags) }
        queueChanged(renewLookahead: false)
    }

    /// Changes a play mode; the look-ahead follows at once, so it applies from the next boundary.
    package func setModes(_ body: (inout PlayQueue<QueuedSong>) -> Void) {
        syncWithPlayer()
        body(&playQueue)
        gains.queueRandomChanged(playQueue.random)
        scheduleLookahead()
        events.post([.options])
    }

    /// Puts back the modes and volume a saved state had (before its queue is appended).
    package func restore(_ modes: SavedState.Modes) {
        playQueue.setRepeat(modes.repeats)
        playQueue.setRandom(modes.random)
        playQueue.setSingle(SingleMode(rawValue: modes.single) ?? .off)
        playQueue.setConsume(ConsumeMode(rawValue: modes.consume) ?? .off)
        gains.queueRandomChanged(modes.random)
        if let mode = modes.replayGain.flatMap(ReplayGainMode.init(rawValue:)) { gains.setMode(mode) }
        setVolume(modes.volume)
    }

    /// Sets the software mixer's volume (MPD's curve, ``SoftwareVolume``).
    package func setVolume(_ percent: Int) {
        let percent = min(max(percent, 0), 100)
        guard percent != volume else { return }
        volume = percent
        player.volume = SoftwareVolume.linearVolume(percent: percent)
        events.post([.mixer])
    }

    // MARK: - Song blocks

    /// The position of the song with `id`; `No such song` if there is none.
    package func position(ofID id: Int) throws(MPDError) -> Int {
        guard let position = playQueue.position(ofID: id) else { throw MPDError.noSuchSong }
        return position
    }

    /// The song block of the entry at `position`, with `Pos`, `Id` and `Prio`.
    package func songInfo(at position: Int) -> SongInfo {
        let entry = playQueue.entries[position]
        var info = entry.song.info
        // A stream names itself once it plays: its ICY title and name (mpd's `Title`, `Name`).
        if entry.song.isStream, let playing = nowPlaying, playing.id == entry.id {
            if let title = playing.item.streamTitle, !title.isEmpty { info.tags.append(.init(.title, title)) }
            if let name = playing.item.streamName, !name.isEmpty { info.tags.append(.init(.name, name)) }
        }
        info.position = position
        info.id = entry.id
        info.priority = Int(entry.priority)
        return info
    }

    // MARK: - Following the player

    /// Brings the partition up to date with the player (MPD's `SyncWithPlayer`): the
    /// look-ahead became the song being heard, or the queue ran out.
    package func syncWithPlayer() {
        // An announcement is not the queue's: the queue is where it was until it ends.
        guard state.value.announcement == nil else { return }
        let item = player.currentItem
        if let item, item === nowPlaying?.item { return }
        if let item, let next = lookahead, item === next.item {
            lookaheadStarted(next)
            scheduleLookahead()
            events.post([.player])
            return
        }
        if item == nil, var finished = nowPlaying {
            // The player went through the look-ahead as well and ran out before the partition
            // handed it the song after that (a song shorter than the partition takes to catch
            // up, an output that does not pace): the look-ahead started and ended. As MPD's
            // `SyncWithPlayer` resumes a stopped player with the next song when the playlist did
            // not fill the player's queue in time, playback goes on after it.
            if let ahead = lookahead, !player.items().contains(where: { $0 === ahead.item }) {
                lookaheadStarted(ahead)
                finished = ahead
                if ahead.item.status != .failed, resumeAfterRunningOut(from: ahead) { return }
            }
            if case .failed = finished.item.status, moveOn(afterFailureOf: finished) { return }
            // The last song played to its end: stopped, with no current song (as mpd, transcript 55).
            nowPlaying = nil
            lookahead = nil
            if let position = playQueue.position(ofID: finished.id) { consumeIfNeeded(position) }
            playQueue.stopped()
            playQueue.makeCurrent(nil)
            events.post([.player])
        }
    }

    /// The player is on the look-ahead: it is the song being heard now (``PlayQueue/songStarted(position:)``:
    /// consume, one-shot modes, priorities).
    private func lookaheadStarted(_ next: Handoff) {
        let previous = nowPlaying
        nowPlaying = next
        lookahead = nil
        guard let position = playQueue.position(ofID: next.id) else { return }
        let optionsChanged = playQueue.songStarted(position: position)
        if optionsChanged { events.post([.options]) }
        if previous.map({ playQueue.position(ofID: $0.id) == nil }) ?? false { queueChanged(renewLookahead: false) }
    }

    /// The player played `heard` to its end with nothing after it because the song to follow
    /// was not handed over in time: plays the song the look-ahead would have been. False when
    /// the queue has none to follow (single mode, the end of the queue): the caller stops.
    private func resumeAfterRunningOut(from heard: Handoff) -> Bool {
        guard !playQueue.stopsAtSongEnd, let position = playQueue.position(ofID: heard.id),
              let following = playQueue.chooseNext() else { return false }
        let followingID = playQueue.entries[following].id
        consumeIfNeeded(position)
        guard let at = playQueue.position(ofID: followingID) else { return false }
        startPlayback(at: at)
        return true
    }

    /// Single mode without repeat: at the end of a song the player moves to the next one
    /// and pauses there, as mpd's player pauses at the song border.
    private func itemDidPlayToEnd(_ item: PlayerItem) {
        if let announcement = state.value.announcement, item === announcement.item {
            return announcementDidEnd(announcement)
        }
        syncWithPlayer()
        guard item === nowPlaying?.item else { return }
        consecutiveFailures = 0
        let sleeping = sleepTimer.pausesAtItemEnd
        guard playQueue.stopsAtSongEnd || sleeping else { return }
        defer { if sleeping { sleepTimer.itemEndReached(); applyActionAtItemEnd() } }
        if lookahead != nil {
            player.pause()
            player.remove(item)
            syncWithPlayer()
        } else {
            // The last song: mpd's player stops, and the playlist with no current song.
            if let position = currentPosition { consumeIfNeeded(position) }
            stop()
            playQueue.makeCurrent(nil)
        }
    }

    /// A song that could not be opened or decoded: playback goes on with the one after it.
    private func itemFailed(_ item: PlayerItem) {
        if let announcement = state.value.announcement, item === announcement.item {
            logger.warning("cannot play the announcement \(item.url.path)")
            return announcementDidEnd(announcement)
        }
        syncWithPlayer()
        guard let failed = lookahead, item === failed.item else { return }
        lookahead = nil
        consecutiveFailures += 1
        guard consecutiveFailures < playQueue.count, let position = playQueue.position(ofID: failed.id) else { return }
        setLookahead(nextPosition(after: position))
    }

    /// The song being heard failed and the player had nothing after it (the look-ahead failed
    /// too, or was not handed over before the failure, as with streams that fail when reached):
    /// the queue goes on with the song after it, as mpd skips a song it cannot play. Returns
    /// false when there is none, or when every song in a row has failed (no endless retries).
    private func moveOn(afterFailureOf failed: Handoff) -> Bool {
        consecutiveFailures += 1
        guard let position = playQueue.position(ofID: failed.id) else { return false }
        var next = nextPosition(after: position)
        // The look-ahead failed before it (its failure not yet taken here): not tried again.
        if let ahead = lookahead, case .failed = ahead.item.status, let aheadPosition = playQueue.position(ofID: ahead.id),
           next == aheadPosition {
            consecutiveFailures += 1
            next = nextPosition(after: aheadPosition)
        }
        let failures = consecutiveFailures
        guard failures < playQueue.count, let next else { return false }
        startPlayback(at: next)
        consecutiveFailures = failures
        return true
    }

    /// Makes the player's second item the song the queue says comes next.
    private func scheduleLookahead() {
        guard let nowPlaying, playQueue.position(ofID: nowPlaying.id) != nil else {
            setLookahead(nil)
            return
        }
        applyActionAtItemEnd()
        setLookahead(playQueue.chooseNext())
    }

    /// Hands the player the song at `position` to follow the one being heard (none: nil),
    /// unless it already has it.
    private func setLookahead(_ position: Int?) {
        let wanted = position.map { playQueue.entries[$0] }
        if let lookahead, lookahead.id == wanted?.id { return }
        if let lookahead { player.remove(lookahead.item) }
        lookahead = nil
        playQueue.setQueued(wanted.flatMap { playQueue.position(ofID: $0.id) })
        guard let wanted, let nowPlaying else { return }
        let item = ChapterSource.item(for: wanted.song, logger: logger)
        pace.prepare(item)
        lookahead = Handoff(item: item, id: wanted.id)
        player.insert(item, after: nowPlaying.item)
    }

    /// Consume mode: the song at `position` has been heard to its end (or skipped) and goes.
    private func consumeIfNeeded(_ position: Int) {
        guard playQueue.consume != .off else { return }
        playQueue.remove(position..<position + 1)
        if playQueue.consume == .oneshot {
            playQueue.setConsume(.off)
            events.post([.options])
        }
        queueChanged(renewLookahead: false)
    }

    /// The position after `position` in play order, ignoring single mode.
    private func nextPosition(after position: Int) -> Int? {
        var copy = playQueue
        copy.makeCurrent(position)
        copy.setSingle(.off)
        return copy.nextPosition
    }

    private func song(for url: URL) -> QueuedSong {
        songs.song(for: url)
    }

    private func queueChanged(renewLookahead: Bool = true) {
        lastError = nil
        if renewLookahead { scheduleLookahead() }
        events.post([.playlist])
    }
}

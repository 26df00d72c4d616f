import MPDProtocol

/// MPD's play queue as a value: songs with stable ids, the queue version every change
/// bumps, the play modes, and the one rule that says which song comes after the current one.
///
/// It knows nothing of the player: the partition asks it what comes next (to hand the
/// render thread the next item ahead of time, for the gapless hand-over) and tells it when
/// a song started (``songStarted(position:)``, where consume and the one-shot modes act).
///
/// The random order is kept as a list of song ids rather than positions, so moving,
/// swapping or deleting songs never has to renumber it: a song keeps its place in the
/// random order wherever it moves in the queue, as in MPD.
///
/// Versions follow MPD's `plchanges` contract: a change marks every song whose position or
/// content it changed with the queue's version, then bumps the version. A client that last
/// saw version `v` asks for the songs marked `v` or later.
package struct PlayQueue<Song: Sendable>: Sendable {
    /// A queued song.
    struct Entry: Sendable {
        /// Stable for the song's life in the queue (`Id:`), never reused.
        let id: Int
        var song: Song
        /// The queue version when this entry's position or content last changed.
        fileprivate(set) var version: UInt32
        /// MPD's priority (0 to 255): in random mode, higher priorities play first.
        fileprivate(set) var priority: UInt8
    }

    /// The songs, in queue order.
    private(set) var entries: [Entry] = []
    /// Bumped by every change; `playlist:` in `status`.
    private(set) var version: UInt32 = 1
    private(set) var repeats = false
    private(set) var single = SingleMode.off
    private(set) var consume = ConsumeMode.off
    /// In random mode, the play order as song ids; nil otherwise (the order is the queue's).
    private var randomOrder: [Int]?
    /// The id of the current song (`song:`/`songid:` in `status`), if any.
    private(set) var currentID: Int?
    /// The id of the song queued after the current one (``setQueued(_:)``).
    private var queuedID: Int?
    private var positions: [Int: Int] = [:]
    private var nextID = 1
    private var generator: any RandomNumberGenerator & Sendable

    /// An empty queue; `generator` shuffles (tests pass a seeded one).
    init(generator: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.generator = generator
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var random: Bool { randomOrder != nil }

    /// The position of the song with `id`, if it is queued.
    func position(ofID id: Int) -> Int? { positions[id] }

    /// The current song's position, if any.
    var currentPosition: Int? { currentID.flatMap { positions[$0] } }

    // MARK: - Changing the queue

    /// Inserts `song` at `position` (the end when nil); returns its id.
    @discardableResult
    mutating func insert(_ song: Song, at position: Int? = nil, priority: UInt8 = 0) -> Int {
        let position = min(position ?? entries.count, entries.count)
        let id = nextID
        nextID += 1
        entries.insert(Entry(id: id, song: song, version: version, priority: priority), at: position)
        markShifted(from: position)
        if var order = randomOrder {
            // A new song goes somewhere among the songs not yet played or queued, within its priority group.
            let start = ((queuedID ?? currentID).flatMap { order.firstIndex(of: $0) }).map { $0 + 1 } ?? 0
            let slot = Int.random(in: start...order.count, using: &generator)
            order.insert(id, at: slot)
            randomOrder = order
            sortByPriority(from: start)
        }
        bump()
        return id
    }

    /// Removes the songs at `range`. The current song, if removed, is no longer current.
    mutating func remove(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        let removed = Set(entries[range].map(\.id))
        entries.removeSubrange(range)
        if let current = currentID, removed.contains(current) { currentID = nil }
        if let queued = queuedID, removed.contains(queued) { queuedID = nil }
        randomOrder?.removeAll { removed.contains($0) }
        markShifted(from: range.lowerBound)
        bump()
    }

    /// Removes every song.
    mutating func removeAll() {
        entries.removeAll()
        currentID = nil
        queuedID = nil
        if randomOrder != nil { randomOrder = [] }
        positions = [:]
        bump()
    }

    /// Moves the songs at `range` so that the first of them lands at `destination`
    /// (a position in the queue as it is after they were taken out).
    mutating func move(_ range: Range<Int>, to destination: Int) {
        guard !range.isEmpty, destination != range.lowerBound else { return }
        let moving = entries[range]
        entries.removeSubrange(range)
        entries.insert(contentsOf: moving, at: destination)
        let low = min(range.lowerBound, destination)
        let high = max(range.upperBound, destination + range.count)
        mark(low..<high)
        bump()
    }

    /// Exchanges the songs at two positions.
    mutating func swapAt(_ first: Int, _ second: Int) {
        guard first != second else { return }
        entries.swapAt(first, second)
        mark(first..<first + 1)
        mark(second..<second + 1)
        bump()
    }

    /// Shuffles the songs in `range` (their queue positions). A current song inside the
    /// range goes first, so the rest of the range plays after it.
    mutating func shuffle(_ range: Range<Int>) {
        guard range.count > 1 else { return }
        var start = range.lowerBound
        if let current = currentPosition, range.contains(current) {
            entries.swapAt(range.lowerBound, current)
            start += 1
        }
        entries[start..<range.upperBound].shuffle(using: &generator)
        mark(range)
        bump()
    }

    /// Sets the priority of the songs in `range`. In random mode, the songs not yet played are
    /// reordered so that higher priorities come first.
    mutating func setPriority(_ priority: UInt8, for range: Range<Int>) {
        guard !range.isEmpty else { return }
        for position in range where entries[position].priority != priority {
            entries[position].priority = priority
            entries[position].version = version
        }
        if let order = randomOrder {
            let start = (currentID.flatMap { order.firstIndex(of: $0) }).map { $0 + 1 } ?? 0
            sortByPriority(from: start)
        }
        bump()
    }

    /// Replaces the song at `position` (new tags, say) without moving it.
    mutating func update(at position: Int, _ body: (inout Song) -> Void) {
        body(&entries[position].song)
        mark(position..<position + 1)
        bump()
    }

    // MARK: - Modes

    mutating func setRepeat(_ on: Bool) { repeats = on }
    mutating func setSingle(_ mode: SingleMode) { single = mode }
    mutating func setConsume(_ mode: ConsumeMode) { consume = mode }

    /// Turns random mode on (a fresh order, the current song first, so everything else plays
    /// after it) or off (the queue's own order).
    ///
    /// Turned on while stopped, no song stays current (as MPD's `SetRandom` does when not
    /// playing): the next `play` starts at the first song of the new order, a random one.
    mutating func setRandom(_ on: Bool, keepingCurrent: Bool = true) {
        guard on != random else { return }
        if on {
            if !keepingCurrent { currentID = nil }
            randomOrder = entries.map(\.id)
            reshuffle()
        } else {
            randomOrder = nil
        }
    }

    // MARK: - Playing

    /// Makes the song at `position` current (nil: none), as `play N` does.
    ///
    /// In random mode the chosen song moves in the random order to just after the song that
    /// was current (to the front when none was), as MPD's `MoveOrderToCurrent` does: the songs
    /// not yet played stay ahead of it, so none is skipped.
    mutating func makeCurrent(_ position: Int?) {
        let chosen = position.map { entries[$0].id }
        if let chosen, var order = randomOrder, chosen != currentID, let from = order.firstIndex(of: chosen) {
            order.remove(at: from)
            let after = currentID.flatMap { order.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            order.insert(chosen, at: after)
            randomOrder = order
        }
        currentID = chosen
        queuedID = nil
    }

    /// The song the player was handed to follow the current one (its look-ahead, decoded
    /// ahead of time): a song added in random mode is placed after it, so it is not displaced.
    mutating func setQueued(_ position: Int?) {
        queuedID = position.map { entries[$0].id }
    }

    /// True where MPD's player pauses at the end of the current song instead of going on
    /// (single mode without repeat).
    var stopsAtSongEnd: Bool { single != .off && !repeats }

    /// The position `play` starts from when no song is current: the first in play order (in
    /// random mode, the first of the random order, as MPD's `PlayAny`).
    var firstPosition: Int? {
        guard !entries.isEmpty else { return nil }
        return positionInOrder(0)
    }

    /// The position of the song that plays after the current one, or nil when playback ends
    /// there. `single` without `repeat` still names the next song: the caller decides to stop
    /// (see ``stopsAtSongEnd``), as MPD's player pauses at the border.
    var nextPosition: Int? {
        nextOrderIndex.flatMap(positionInOrder)
    }

    /// Chooses the song the player is handed to follow the current one (its look-ahead, see
    /// ``nextPosition``) and remembers it as queued (``setQueued(_:)``).
    ///
    /// Where the random order wraps around (repeat, single off), a new order is drawn first
    /// and the next pass starts at its first song, as MPD's `UpdateQueuedSong` does: the choice
    /// is made here, ahead of the boundary, so that the look-ahead already is the new pass's
    /// first song and the hand-over stays gapless. (Drawing the order only once the song had
    /// started would have started every pass with the same song.)
    ///
    /// Unlike MPD, the current song goes last in the new order: its place there is where the
    /// pass wraps around, so ``nextPosition`` (`nextsong` in `status`) still names the song
    /// queued, and choosing again before the boundary (after an edit or a mode change) keeps
    /// that draw instead of continuing from wherever the current song landed, which would skip
    /// part of the new pass. It also means no song plays twice in a row at the wrap-around.
    mutating func chooseNext() -> Int? {
        let index = nextOrderIndex
        if random, single == .off, index == 0, let currentID, queuedID != randomOrder?.first {
            reshuffle(currentFirst: false)
            if let at = randomOrder?.firstIndex(of: currentID), entries.count > 1 {
                randomOrder?.remove(at: at)
                randomOrder?.append(currentID)
            }
        }
        let next = index.flatMap(positionInOrder)
        setQueued(next)
        return next
    }

    /// Playback stopped (`stop`, or the queue's end): in random mode a new order is drawn, so
    /// that the next playback is a different one (MPD's `playlist::Stop`). The current song
    /// stays current wherever it lands in the new order: `play` plays it again.
    mutating func stopped() {
        queuedID = nil
        if random { reshuffle(currentFirst: false) }
    }

    /// The song at `position` has become audible after the current one (a gapless hand-over,
    /// or a song's end moving on). Consume removes the song that ended and `consume oneshot`
    /// turns itself off (MPD's `QueuedSongStarted`); `single oneshot` turns itself off where
    /// the player paused at the border, that is without repeat (MPD's `BorderPause`: with
    /// repeat, single repeats the song and stays on); the song's priority is spent. Returns
    /// true if a mode changed (an `options` event).
    @discardableResult
    mutating func songStarted(position: Int) -> Bool {
        let startedID = entries[position].id
        let previousID = currentID
        let pausedAtBorder = stopsAtSongEnd
        currentID = startedID
        if queuedID == startedID { queuedID = nil }
        if let previousID, previousID != startedID, consume != .off, let old = positions[previousID] {
            remove(old..<old + 1)
        }
        var optionsChanged = false
        if consume == .oneshot {
            consume = .off
            optionsChanged = true
        }
        if single == .oneshot && pausedAtBorder {
            single = .off
            optionsChanged = true
        }
        if let at = positions[startedID], entries[at].priority != 0 {
            setPriority(0, for: at..<at + 1)
        }
        return optionsChanged
    }

    /// The position `previous` plays: the song before the current one in play order; from
    /// the first, the last with repeat, else the current song again.
    var previousPosition: Int? {
        guard let currentID, let index = orderIndex(of: currentID) else { return nil }
        if index > 0 { return positionInOrder(index - 1) }
        if repeats { return positionInOrder(entries.count - 1) }
        return positionInOrder(index)
    }

    // MARK: - Changes since a version

    /// The positions of songs changed at or after `clientVersion` (`plchanges`): every song
    /// for a version this queue never had.
    func changes(since clientVersion: UInt32) -> [Int] {
        if clientVersion > version { return Array(entries.indices) }
        return entries.indices.filter { entries[$0].version >= clientVersion }
    }

    // MARK: - Private

    /// The index in play order of the song after the current one (MPD's `GetNextOrder`).
    private var nextOrderIndex: Int? {
        guard let currentID, let index = orderIndex(of: currentID) else { return nil }
        if single != .off && repeats && consume == .off { return index }
        if index + 1 < entries.count { return index + 1 }
        // Past the last song: repeat starts over, unless consume has emptied what came before.
        if repeats && (index > 0 || consume == .off) { return 0 }
        return nil
    }

    private func orderIndex(of id: Int) -> Int? {
        if let order = randomOrder { return order.firstIndex(of: id) }
        return positions[id]
    }

    private func positionInOrder(_ index: Int) -> Int? {
        guard let order = randomOrder else { return index }
        return positions[order[index]]
    }

    /// A new random order: by priority, shuffled within each priority; the current song first
    /// if `currentFirst` (MPD's `ShuffleOrder`, then `MoveOrder(current, 0)`).
    private mutating func reshuffle(currentFirst: Bool = true) {
        guard var order = randomOrder else { return }
        order.shuffle(using: &generator)
        randomOrder = order
        sortByPriority(from: 0)
        if currentFirst, let currentID, let index = randomOrder?.firstIndex(of: currentID) {
            randomOrder?.remove(at: index)
            randomOrder?.insert(currentID, at: 0)
        }
    }

    /// Orders `randomOrder[start...]` by priority, highest first, keeping the shuffled order
    /// within each priority (a stable sort).
    private mutating func sortByPriority(from start: Int) {
        guard var order = randomOrder, start < order.count else { return }
        let priorities = Dictionary(uniqueKeysWithValues: entries.map { ($0.id, $0.priority) })
        let tail = order[start...].enumerated().sorted {
            let (a, b) = (priorities[$0.element] ?? 0, priorities[$1.element] ?? 0)
            return a != b ? a > b : $0.offset < $1.offset
        }.map(\.element)
        order.replaceSubrange(start..., with: tail)
        randomOrder = order
    }

    /// Marks the songs from `position` to the end (their positions moved) and reindexes them.
    private mutating func markShifted(from position: Int) {
        mark(position..<entries.count)
    }

    private mutating func mark(_ range: Range<Int>) {
        for position in range.clamped(to: entries.indices) {
            entries[position].version = version
            positions[entries[position].id] = position
        }
        if positions.count != entries.count {
            positions = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.id, $0) })
        }
    }

    /// Ends a change: the next change is a new version (MPD wraps at 2^31, resetting marks).
    private mutating func bump() {
        version += 1
        if version >= 1 << 31 {
            for index in entries.indices { entries[index].version = 0 }
            version = 1
        }
    }
}

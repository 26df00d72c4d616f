import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Stickers

/// What the daemon remembers of the items it plays, as stickers on their song URIs (mpd's
/// sticker database, so clients read them with `sticker get|list|find song`):
///
/// - `elapsed`: where a podcast episode (a file under the music directory's `Podcasts/`, or a
///   network item with a length) or an item of ``longItem`` seconds or more stopped being heard
///   before its last ``endMargin`` seconds: saved every ``saveInterval`` seconds of playing, and
///   when it is left (another item, `stop`, the daemon's exit); removed once it is heard into
///   its last ``endMargin`` seconds. ``resumePoint(of:)`` is where `play` starts it again. Live
///   streams (no length) keep nothing.
/// - myMPD's statistics, unless a client keeps them (``Options/keepsStatistics``): `playCount`
///   and `lastPlayed` (unix time) once an item longer than ``shortest`` seconds has been heard
///   for half its length or ``playedEnough`` seconds; `skipCount` and `lastSkipped` when it is
///   left after ``shortest`` seconds heard but before that.
///
/// The partition tells it, on its queue, which item is heard and where (``began(_:uri:)``,
/// ``heard(_:at:)``, ``leaving(_:at:)``, ``ended(_:)``). Every SQLite statement runs on the
/// writer queue `queueplayerd.resume`, in order: never on an event loop, the render thread or
/// the partition's queue (which waits only for ``resumePoint(of:)``'s read, behind the writes
/// before it, as it waits for a sticker command's statement).
///
/// `@unchecked Sendable`: the heard item is confined to the partition's queue (`QueueBound`,
/// checked on every access); the rest are `let`s.
final class PlaybackMemory: @unchecked Sendable {
    struct Options: Sendable, Equatable {
        /// Seconds taken off `elapsed` when an item resumes (`resume-rewind`).
        var rewind = 0.0
        /// Whether the daemon writes the play statistics (`statistics = daemon`), or leaves them
        /// to a client that keeps them (`client`).
        var keepsStatistics = true
    }

    /// The seconds of playing between two saves of `elapsed`: a crash loses no more.
    static let saveInterval = 5.0
    /// Heard into its last this many seconds, an item is finished: its `elapsed` goes.
    static let endMargin = 30.0
    /// An item this long (seconds) or longer keeps its place even if it is no episode.
    static let longItem = 600.0
    /// Items this short (seconds) or shorter get no statistics, and an item heard for less is not skipped.
    static let shortest = 10.0
    /// Heard this long (seconds), an item counts as played whatever its length (myMPD's 4 minutes).
    static let playedEnough = 240.0

    /// The item being heard, as far as the memory follows it.
    private struct Heard {
        let item: ObjectIdentifier
        let uri: String
        let url: URL
        /// Seconds heard since it began (seeks not counted).
        var heard = 0.0
        /// Where it was last heard.
        var position = 0.0
        /// Its length, once known; nil for a live stream.
        var duration: Double?
        /// `heard` when `elapsed` was last written.
        var savedAtHeard = 0.0
        /// Whether its `playCount` was counted (once per hearing).
        var counted = false
        /// Where a command left it (nil: it is still heard, or played to its end).
        var leftAt: Double?
    }

    private let stickers: StickerDatabase
    let options: Options
    private let events: ControlEvents
    private let logger: Logger
    /// The music directory's `Podcasts/` folder, whose files are episodes.
    private let podcasts: String?
    private let writer = DispatchQueue(label: "queueplayerd.resume")
    private let heard: QueueBound<Heard?>
    /// The wall clock's unix time (`lastPlayed`, `lastSkipped`).
    private let now: @Sendable () -> Int

    init(stickers: StickerDatabase, options: Options, podcasts: URL?, events: ControlEvents, queue: DispatchQueue,
         logger: Logger, now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.stickers = stickers
        self.options = options
        self.podcasts = podcasts.map { $0.standardizedFileURL.path + "/" }
        self.events = events
        self.logger = logger
        self.now = now
        heard = QueueBound(nil, on: queue)
    }

    // MARK: - What the partition reports, on its queue

    /// `item` (the queue's song `uri`) is now the one heard.
    func began(_ item: PlayerItem, uri: String) {
        heard.value = Heard(item: ObjectIdentifier(item), uri: uri, url: item.url)
    }

    /// `item` is heard at `seconds` (the player's periodic time, while it plays).
    func heard(_ item: PlayerItem, at seconds: Double) {
        guard var current = heard.value, current.item == ObjectIdentifier(item) else { return }
        let step = seconds - current.position
        // Playing on, not a seek: counted as heard.
        if step > 0, step <= 3 { current.heard += step }
        current.position = seconds
        current.duration = item.duration?.seconds
        if options.keepsStatistics, !current.counted, let duration = current.duration, duration > Self.shortest,
           current.heard >= min(duration / 2, Self.playedEnough) {
            current.counted = true
            count(current.uri, "playCount", "lastPlayed")
        }
        if current.heard - current.savedAtHeard >= Self.saveInterval {
            current.savedAtHeard = current.heard
            keepPlace(of: current, at: seconds, announcing: false)
        }
        heard.value = current
    }

    /// A command takes the heard item away at `seconds` (another item, `stop`, the daemon's exit).
    func leaving(_ item: PlayerItem, at seconds: Double) {
        guard var current = heard.value, current.item == ObjectIdentifier(item) else { return }
        current.duration = item.duration?.seconds ?? current.duration
        current.leftAt = seconds
        heard.value = current
    }

    /// The heard item is no longer heard: left where ``leaving(_:at:)`` said, else played to its end.
    func ended(_ item: PlayerItem) {
        guard let current = heard.value, current.item == ObjectIdentifier(item) else { return }
        heard.value = nil
        var last = current
        last.duration = item.duration?.seconds ?? current.duration
        guard let left = current.leftAt else {
            if let duration = last.duration { keepPlace(of: last, at: duration, announcing: true) }
            return
        }
        keepPlace(of: last, at: left, announcing: true)
        if options.keepsStatistics, !current.counted, current.heard > Self.shortest, let duration = last.duration,
           duration > Self.shortest {
            count(current.uri, "skipCount", "lastSkipped")
        }
    }

    /// The daemon stops: the item heard keeps its place where it is (no statistics: it was not
    /// left by a listener). It is still followed, should it play on.
    func saveBeforeExit(_ item: PlayerItem, at seconds: Double) {
        guard var current = heard.value, current.item == ObjectIdentifier(item) else { return }
        current.duration = item.duration?.seconds ?? current.duration
        keepPlace(of: current, at: seconds, announcing: true)
    }

    /// Where `play` starts the song `uri` from its start: its `elapsed` less the rewind; nil
    /// when it keeps no place. Waits for the writes before it.
    func resumePoint(of uri: String) -> Double? {
        guard let store = stickers.openStore else { return nil }
        let value = writer.sync { () -> String? in
            do throws(StickerStoreError) {
                return try store.value(uri: uri, name: "elapsed")
            } catch {
                logger.error("sticker database \(store.file.path): \(error.description)")
                return nil
            }
        }
        guard let value, let seconds = Double(value), seconds.isFinite, seconds > 0 else { return nil }
        return max(0, seconds - options.rewind)
    }

    /// The items keeping a place, with where (`elapsed`), by URI. Waits for the writes before it.
    func inProgress() throws(StickerStoreError) -> [(uri: String, elapsed: Double)] {
        guard let store = stickers.openStore else { return [] }
        let result = writer.sync { Result { () throws(StickerStoreError) in try store.find(StickerQuery(directory: "", name: "elapsed")) } }
        return try result.get().compactMap { row in Double(row.value).map { (row.uri, $0) } }
    }

    /// Waits for every write queued so far (the daemon's exit).
    func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in writer.async { done.resume() } }
    }

    // MARK: - The rules

    /// Whether `heard` is an item whose place is kept: a podcast episode or a long item, with a length.
    private func keepsPlace(_ heard: Heard) -> Bool {
        guard let duration = heard.duration, duration > 0, duration.isFinite else { return false }
        if duration >= Self.longItem { return true }
        if heard.url.isFileURL { return podcasts.map { heard.url.standardizedFileURL.path.hasPrefix($0) } ?? false }
        // A network item with a length: an episode played from its enclosure URL.
        return true
    }

    /// Writes `elapsed` at `seconds`, or removes it in the last ``endMargin`` seconds.
    private func keepPlace(of heard: Heard, at seconds: Double, announcing: Bool) {
        guard keepsPlace(heard), let duration = heard.duration, let store = store() else { return }
        let uri = heard.uri
        let finished = seconds >= duration - Self.endMargin
        let value = String(format: "%.3f", max(0, seconds))
        write(store) { store throws(StickerStoreError) in
            finished ? try store.delete(uri: uri, name: "elapsed") : try store.set(uri: uri, name: "elapsed", value: value)
        } then: { [events] changed in
            if changed && (announcing || finished) { events.post([.sticker]) }
        }
    }

    /// Adds one to the counter sticker `counter` and sets `time` to now.
    private func count(_ uri: String, _ counter: String, _ time: String) {
        guard let store = store() else { return }
        let now = String(now())
        write(store) { store throws(StickerStoreError) in
            let count = (try store.value(uri: uri, name: counter)).flatMap { Int($0) } ?? 0
            try store.set(uri: uri, name: counter, value: String(count + 1))
            try store.set(uri: uri, name: time, value: now)
            return true
        } then: { [events] _ in events.post([.sticker]) }
    }

    /// The store, made now if it is the default file not yet made; nil without stickers.
    private func store() -> StickerStore? {
        do throws(MPDError) {
            return try stickers.store()
        } catch {
            return nil
        }
    }

    private func write(_ store: StickerStore, _ body: @escaping @Sendable (StickerStore) throws(StickerStoreError) -> Bool,
                       then: @escaping @Sendable (Bool) -> Void) {
        writer.async { [logger] in
            do throws(StickerStoreError) {
                then(try body(store))
            } catch {
                logger.error("sticker database \(store.file.path): \(error.description)")
            }
        }
    }
}

import DaemonState
import Foundation
import MPDProtocol
import QueuePlayer

// The sides of a ``Partition`` the rest of the daemon sees: each command handler is given the
// side it uses (``CommandDispatcher``), and so is each part that works beside the partition
// (the status line, the state keeper, the reactions, a client's connection), never the
// partition. All of them run on the partition's queue (``PartitionQueue``), but for
// ``PublishedPlayback``, which is read from any thread.

/// The queue, read: its entries and modes, positions by id, song blocks.
package protocol QueueReading: AnyObject, Sendable {
    /// The songs, their ids and versions, the play modes.
    var playQueue: PlayQueue<QueuedSong> { get }
    /// The queue's current song, also when stopped.
    var selectedPosition: Int? { get }
    /// The position of the song with `id`; `No such song` if there is none.
    func position(ofID id: Int) throws(MPDError) -> Int
    /// The song block of the entry at `position`, with `Pos`, `Id` and `Prio`.
    func songInfo(at position: Int) -> SongInfo
}

/// The queue, added to: what `load`, `findadd`, `searchadd` do.
package protocol QueueInserting: QueueReading {
    /// Inserts `urls` at `position` (the end when nil); returns their ids.
    @discardableResult
    func insert(_ urls: [URL], at position: Int?) -> [Int]
}

/// The queue, changed: what `add`, `delete`, `move`, `prio`, `rangeid`... do.
package protocol QueueEditing: QueueInserting {
    func remove(_ range: Range<Int>)
    func clear()
    func edit(_ body: (inout PlayQueue<QueuedSong>) throws(MPDError) -> Void) throws(MPDError)
    func setRange(_ range: SongTimeRange, ofID id: Int) throws(MPDError)
    func editTags(ofID id: Int, _ body: (inout [SongInfo.Tag]) -> Void) throws(MPDError)
}

/// The player, held or let go as the outputs come and go (`enableoutput`...).
package protocol PlayerHolding: AnyObject, Sendable {
    var player: QueuePlayer { get }
    var playState: Partition.PlayState { get }
    /// True while some output is enabled.
    var outputEnabled: Bool { get }
}

/// What plays, read: the queue, the player, the song the player is on (the status line).
package protocol PlaybackReading: QueueReading, PlayerHolding {
    /// The queue position of the song the player is on; nil when stopped.
    var currentPosition: Int? { get }
    /// Catches the partition up with the player (MPD's `SyncWithPlayer`).
    func syncWithPlayer()
}

/// The last item failure, `status`'s `error` (``PlaybackFailures``).
package protocol ErrorReporting: AnyObject, Sendable {
    var lastError: String? { get set }
}

/// The player and what plays: transport, modes, mixer, the kept `status`.
package protocol PlaybackControl: PlaybackReading, ErrorReporting {
    var volume: Int { get }
    var mixrampdb: Double { get set }
    /// The playback rate, pitch algorithm and skip silence.
    var pace: PlaybackPace { get }
    func startPlayback(at position: Int, from seconds: Double, paused: Bool)
    func stop(reshuffling: Bool)
    func next() throws(MPDError)
    func previous() throws(MPDError)
    func seek(position: Int, seconds: Double) throws(MPDError)
    func setModes(_ body: (inout PlayQueue<QueuedSong>) -> Void)
    func setVolume(_ percent: Int)
    func reply(keeping kind: StatusSnapshot.Kind, _ render: () -> Reply) -> Reply
    /// Where `play` starts the song at `position` from its start (its kept place less the rewind).
    func resumePoint(at position: Int) -> Double
    /// `sleep`'s timer.
    var sleepTimer: SleepTimer { get }
    func setSleep(_ request: SleepRequest) throws(MPDError)
    func cancelSleep()
    /// What is remembered of the items heard; nil: nothing.
    var memory: PlaybackMemory? { get }
}

/// How long the daemon has run and played (`stats`).
package protocol PlayStatistics: AnyObject, Sendable {
    var uptime: Int { get }
    var playedSeconds: Double { get }
}

/// The queue as the podcast downloads change it (``DownloadsIntoLibrary``): an episode
/// appended, a deleted one's entries removed.
package protocol QueueFeeding: AnyObject, Sendable {
    /// Appends `urls` to the queue.
    func append(_ urls: [URL])
    /// Removes every entry that plays `file`.
    func removeAll(playing file: URL)
}

/// What the saved state is taken from and put back into (``StateKeeper``).
package protocol PlaybackRestoring: PlaybackControl, QueueEditing, QueueFeeding {
    /// The song's time, not an announcement's.
    var songTime: Double { get }
    /// Puts the saved play modes and volume back.
    func restore(_ modes: SavedState.Modes)
    /// The playback rate, pitch algorithm and skip silence, saved and restored with the state.
    var pace: PlaybackPace { get }
    /// The ReplayGain mode, saved with the state.
    var gains: ItemGains { get }
}

/// A region's audio played over the queue (``RegionAnnouncements``).
package protocol Announcing: AnyObject, Sendable {
    func announce(_ file: URL, for name: String)
}

/// What the player publishes to any thread: read on an event loop or the clock thread without
/// entering the partition's queue (a `status` answered on the loop, a WebSocket's ticks).
package protocol PublishedPlayback: AnyObject, Sendable {
    var player: QueuePlayer { get }
    /// The player's state a kept `status` depends on.
    var playerConditions: StatusSnapshot.Conditions { get }
    /// The queue entry's id that `item` plays, if the partition handed it to the player.
    func songID(of item: PlayerItem) -> Int?
}

extension Partition: QueueEditing, PlaybackControl, PlayStatistics, PlaybackRestoring, Announcing, PublishedPlayback {}

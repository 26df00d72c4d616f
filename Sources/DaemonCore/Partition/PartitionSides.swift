import Foundation
import MPDProtocol
import QueuePlayer

// The sides of a ``Partition`` the command handlers see: each handler is given the side it
// uses (``CommandDispatcher``), not the partition. All of them run on the partition's queue.

/// The queue, read: its entries and modes, positions by id, song blocks.
protocol QueueReading: AnyObject {
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
protocol QueueInserting: QueueReading {
    /// Inserts `urls` at `position` (the end when nil); returns their ids.
    @discardableResult
    func insert(_ urls: [URL], at position: Int?) -> [Int]
}

/// The queue, changed: what `add`, `delete`, `move`, `prio`, `rangeid`... do.
protocol QueueEditing: QueueInserting {
    func remove(_ range: Range<Int>)
    func clear()
    func edit(_ body: (inout PlayQueue<QueuedSong>) throws(MPDError) -> Void) throws(MPDError)
    func setRange(_ range: SongTimeRange, ofID id: Int) throws(MPDError)
    func editTags(ofID id: Int, _ body: (inout [SongInfo.Tag]) -> Void) throws(MPDError)
}

/// The player, held or let go as the outputs come and go (`enableoutput`...).
protocol PlayerHolding: AnyObject {
    var player: QueuePlayer { get }
    var playState: Partition.PlayState { get }
    /// True while some output is enabled.
    var outputEnabled: Bool { get }
}

/// The player and what plays: transport, modes, mixer, the kept `status`.
protocol PlaybackControl: QueueReading, PlayerHolding {
    var currentPosition: Int? { get }
    var lastError: String? { get set }
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
    func syncWithPlayer()
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
protocol PlayStatistics: AnyObject {
    var uptime: Int { get }
    var playedSeconds: Double { get }
}

extension Partition: QueueEditing, PlaybackControl, PlayStatistics {}

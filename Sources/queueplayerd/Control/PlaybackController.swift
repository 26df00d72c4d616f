import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer

/// The daemon's player as MPD clients see it: a queue (playlist) that stays put
/// while a current-song position moves through it, over a ``QueuePlayer`` that
/// holds the part of it still to play.
///
/// Every method runs on ``queue``. The play state, the current song and its time
/// are read from the player itself, so they are never stale; idle events for the
/// player come from observing it (``ControlEvents``), so a song that ends by
/// itself is reported exactly as a `next` command is.
final class PlaybackController: CommandExecutor, @unchecked Sendable {
    /// A song in the queue: its stable id, its file, and the item that plays it.
    struct Entry {
        let id: Int
        let url: URL
        var item: PlayerItem
        /// What the file says about itself, read when it was added (nil if it cannot be opened).
        let details: SongDetails?
    }

    enum PlayState: String { case play, pause, stop }

    let queue: DispatchQueue
    let player: QueuePlayer
    let library: MusicLibrary
    private let events: ControlEvents
    private let outputDescription: (name: String, plugin: String)

    // Confined to `queue`.
    private var entries: [Entry] = []
    private var nextID = 1
    private var version = 1
    private var stoppedPosition: Int?
    private var outputEnabled = true
    private var updateJob = 0
    private var libraryFiles: [String: Date] = [:]
    private let songIndex = SongIndex()
    private let logger: Logger

    /// The application the controller runs in (the daemon's life cycle): commands that
    /// need the player wake it, `status` reports its state, `update` runs as its background task.
    var application: any ApplicationContext = AlwaysActiveContext()

    init(queue: DispatchQueue, player: QueuePlayer, library: MusicLibrary, events: ControlEvents,
         output: (name: String, plugin: String), logger: Logger) {
        self.logger = logger
        self.queue = queue
        self.player = player
        self.library = library
        self.events = events
        self.outputDescription = output
        libraryFiles = snapshotLibrary()
    }

    // MARK: - Queue operations used by the daemon itself

    /// Appends files to the queue (and to the player, if it is playing through the queue).
    func append(_ urls: [URL]) {
        guard !urls.isEmpty else { return }
        let playing = currentPosition != nil
        for url in urls {
            let details = songIndex.details(of: url)
            let entry = Entry(id: nextID, url: url, item: PlayerItem(url: url), details: details)
            nextID += 1
            entries.append(entry)
            if playing { player.insert(entry.item, after: nil) }
        }
        queueChanged()
    }

    /// Starts playing at `position` (fresh items from there to the end), `seconds`
    /// into that item, or holds it there paused.
    func startPlayback(at position: Int, from seconds: Double = 0, paused: Bool = false) {
        player.removeAllItems()
        if seconds > 0 || paused { player.pause() }
        for index in position..<entries.count {
            entries[index].item = PlayerItem(url: entries[index].url)
            player.insert(entries[index].item, after: nil)
        }
        stoppedPosition = nil
        if seconds > 0 { player.seek(to: MediaTime(seconds: seconds)) }
        if outputEnabled && !paused { player.play() } else { player.pause() }
    }

    /// The queued files, in order.
    var queuedFiles: [URL] { entries.map(\.url) }

    // MARK: - Derived state

    /// The queue position of the item the player is on.
    var currentPosition: Int? {
        guard let item = player.currentItem else { return nil }
        return entries.firstIndex { $0.item === item }
    }

    var playState: PlayState {
        guard currentPosition != nil else { return .stop }
        return player.rate == 0 ? .pause : .play
    }

    // MARK: - CommandExecutor

    /// Commands that act on the player wake a suspended daemon once their arguments
    /// and the player's state allow them, as a remote command wakes a suspended app.
    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
        switch command {
        case .play(let position):
            try play(position)
        case .pause(let flag):
            guard playState != .stop else { return .empty }
            application.commandNeedsPlayer()
            let pause = flag ?? (playState == .play)
            if pause { player.pause() } else if outputEnabled { player.play() }
        case .next:
            guard let position = currentPosition else { throw MPDError.notPlaying }
            application.commandNeedsPlayer()
            if position + 1 < entries.count {
                player.advanceToNextItem()
                // As mpd does, moving to another song plays it.
                if outputEnabled { player.play() }
            } else {
                stop()
            }
        case .previous:
            guard let position = currentPosition else { throw MPDError.notPlaying }
            application.commandNeedsPlayer()
            startPlayback(at: max(0, position - 1))
        case .stop:
            application.commandNeedsPlayer()
            stop()
        case .seekcur(let target):
            guard playState != .stop, let duration = player.currentItem?.duration?.seconds else { throw MPDError.notPlaying }
            application.commandNeedsPlayer()
            let seconds = min(max(0, target.seconds(from: player.currentTime().seconds)), duration)
            player.seek(to: MediaTime(seconds: seconds))
            // A seek changes neither the item nor the transport state, so no observation reports it.
            events.post([.player])
        case .status:
            return status()
        case .currentsong:
            guard let position = currentPosition ?? stoppedPosition, position < entries.count else { return .empty }
            var reply = Reply()
            reply.append(song(at: position))
            return reply
        case .playlistinfo(let range):
            var reply = Reply()
            for position in try range.positionsForListing(queueLength: entries.count) { reply.append(song(at: position)) }
            return reply
        case .add(let uri):
            guard let files = library.files(for: uri), !files.isEmpty else { throw MPDError.noSuchDirectory }
            append(files)
        case .clear:
            entries.removeAll()
            stoppedPosition = nil
            queueChanged()
            player.removeAllItems()
        case .delete(let range):
            let positions = try range.positionsForDeletion(queueLength: entries.count)
            delete(positions)
        case .setvol:
            throw MPDError.noMixer
        case .repeat(let on), .random(let on), .consume(let on):
            if on { throw MPDError(.argument, "Not supported by queueplayerd") }
        case .single(let mode):
            if mode != .off { throw MPDError(.argument, "Not supported by queueplayerd") }
        case .outputs:
            var reply = Reply()
            reply.append("outputid", 0)
            reply.append("outputname", outputDescription.name)
            reply.append("plugin", outputDescription.plugin)
            reply.append("outputenabled", outputEnabled ? 1 : 0)
            return reply
        case .enableoutput(let id), .disableoutput(let id):
            guard id == 0 else { throw MPDError.noSuchOutput }
            let enable: Bool
            if case .enableoutput = command { enable = true } else { enable = false }
            if enable != outputEnabled {
                outputEnabled = enable
                // With its only output disabled the player cannot play: it holds its place.
                if !enable { player.pause() } else if playState == .pause { player.play() }
                events.post([.output])
            }
        case .update:
            return update()
        case .config:
            var reply = Reply()
            reply.append("music_directory", library.root.path)
            return reply
        default:
            // Protocol-level commands never reach the executor (ClientSession answers them).
            throw MPDError(.unknown, "unknown command \"\(command.name)\"")
        }
        return .empty
    }

    // MARK: - Commands

    private func play(_ position: Int?) throws(MPDError) {
        if let position {
            guard position >= 0, position < entries.count else { throw MPDError.badSongIndex }
            application.commandNeedsPlayer()
            startPlayback(at: position)
            return
        }
        switch playState {
        case .play: return
        case .pause:
            application.commandNeedsPlayer()
            if outputEnabled { player.play() }
        case .stop:
            guard !entries.isEmpty else { return }
            application.commandNeedsPlayer()
            startPlayback(at: min(stoppedPosition ?? 0, entries.count - 1))
        }
    }

    private func stop() {
        stoppedPosition = currentPosition ?? stoppedPosition
        player.removeAllItems()
        player.pause()
    }

    private func delete(_ positions: Range<Int>) {
        guard !positions.isEmpty else { return }
        let current = currentPosition
        for position in positions.reversed() {
            let entry = entries.remove(at: position)
            if current != nil && position >= current! { player.remove(entry.item) }
        }
        if let stopped = stoppedPosition {
            stoppedPosition = stopped >= positions.upperBound ? stopped - positions.count
                : stopped >= positions.lowerBound ? (entries.isEmpty ? nil : min(positions.lowerBound, entries.count - 1)) : stopped
        }
        queueChanged()
    }

    private func status() -> Reply {
        // First: reading the time brings the player's timeline up to date, so an item that
        // has just ended is not reported as current with its time reset.
        let elapsed = player.currentTime().seconds
        var reply = Reply()
        reply.append("repeat", 0)
        reply.append("random", 0)
        reply.append("single", 0)
        reply.append("consume", 0)
        reply.append("partition", "default")
        reply.append("playlist", version)
        reply.append("playlistlength", entries.count)
        reply.append("mixrampdb", 0)
        let state = playState
        reply.append("state", state.rawValue)
        let position = currentPosition ?? stoppedPosition.flatMap { $0 < entries.count ? $0 : nil }
        if let position {
            reply.append("song", position)
            reply.append("songid", entries[position].id)
        }
        if state != .stop, let item = player.currentItem {
            let duration = item.duration?.seconds ?? 0
            reply.append("time", "\(ProtocolFormatting.wholeSeconds(elapsed)):\(ProtocolFormatting.wholeSeconds(duration))")
            reply.append("elapsed", seconds: elapsed)
            reply.append("bitrate", item.bitRate ?? 0)
            reply.append("duration", seconds: duration)
            if let format = item.format { reply.append("audio", "\(format.sampleRate):16:\(format.channelCount)") }
        }
        if updateJob > 0 && updateRunning { reply.append("updating_db", updateJob) }
        if let position, position + 1 < entries.count {
            reply.append("nextsong", position + 1)
            reply.append("nextsongid", entries[position + 1].id)
        }
        // As mpd reports an output it cannot open: in `error`, while the state stays `play`.
        if player.reasonForWaitingToPlay == .outputUnavailable {
            reply.append("error", "audio output unavailable; retrying")
        } else if let error = lastError {
            reply.append("error", error)
        }
        for (key, value) in application.statusFields { reply.append(key, value) }
        return reply
    }

    private func song(at position: Int) -> SongInfo {
        let entry = entries[position]
        let item = entry.item
        var tags: [SongInfo.Tag] = []
        let metadata = item.status == .readyToPlay ? item.metadata : entry.details?.metadata ?? item.metadata
        let format = item.format ?? entry.details?.format
        let duration = item.duration?.seconds ?? entry.details?.duration
        if let artist = metadata.artist { tags.append(.init(.artist, artist)) }
        if let title = metadata.title { tags.append(.init(.title, title)) }
        if let album = metadata.album { tags.append(.init(.album, album)) }
        if let track = metadata.track { tags.append(.init(.track, track)) }
        if let date = metadata.date { tags.append(.init(.date, date)) }
        if let genre = metadata.genre { tags.append(.init(.genre, genre)) }
        let modified = SongIndex.modificationDate(of: entry.url).map { Int64($0.timeIntervalSince1970) }
        return SongInfo(
            file: library.uri(for: entry.url), lastModified: modified,
            format: format.map { "\($0.sampleRate):16:\($0.channelCount)" },
            tags: tags, duration: duration, position: position, id: entry.id)
    }

    // MARK: - Update

    private var updateRunning = false

    /// Rescans the library in a background task: which files exist (`database` is
    /// reported if that changed), then the tags of new and changed files, which
    /// `add` uses. A scan cut short by the background time is logged and redone
    /// by the next `update`.
    private func update() -> Reply {
        updateJob += 1
        let job = updateJob
        updateRunning = true
        events.post([.update])
        let files = library.allFiles()
        let before = libraryFiles
        libraryFiles = snapshotLibrary(files)
        let changed = before != libraryFiles
        let activity = application.beginBackgroundActivity(named: "update")
        DispatchQueue.global(qos: .utility).async { [self, songIndex, logger] in
            let scanned = songIndex.refresh(files) { activity.isExpired }
            if scanned < files.count {
                logger.warning("update \(job) stopped early: the background time ran out after \(scanned) of \(files.count) files")
            }
            self.queue.async { [self] in
                if updateJob == job { updateRunning = false }
                events.post(changed ? [.database, .update] : [.update])
                activity.end()
            }
        }
        var reply = Reply()
        reply.append("updating_db", job)
        return reply
    }

    private func snapshotLibrary(_ urls: [URL]? = nil) -> [String: Date] {
        var files: [String: Date] = [:]
        for url in urls ?? library.allFiles() {
            files[library.uri(for: url)] = SongIndex.modificationDate(of: url) ?? .distantPast
        }
        return files
    }

    // MARK: - Changes

    /// The last item failure, reported in `status` as `error` until the next queue change.
    var lastError: String?

    private func queueChanged() {
        version += 1
        events.post([.playlist])
    }
}

import Dispatch
import Foundation
import Logging
import QueuePlayer
import Synchronization
@testable import DaemonCore

/// What ``Daemon`` makes around a player, made the same way in the test process: the
/// ``Instance``, the ``Partition``, the commands, and what a client's connection uses.
final class DaemonParts {
    let queue: DispatchQueue
    let events: ControlEvents
    let partition: Partition
    let instance: Instance
    let commands: CommandDispatcher

    /// - Parameters:
    ///   - stateDirectory: where the song database and the stored playlists are kept.
    ///   - stickers: the sticker database as the daemon would have opened it.
    ///   - memory: what the daemon remembers of the items heard, in `stickers` (nil: nothing).
    init(player: QueuePlayer, library: MusicLibrary, stateDirectory: URL, stickers: StickerAvailability = .off,
         memory: PlaybackMemory.Options? = nil,
         access: AccessPolicy = .open, shutdown: any DaemonShutdown = ShutdownRequests(),
         queue: DispatchQueue = DispatchQueue(label: "test.partition")) {
        let logger = Logger(label: "test")
        self.queue = queue
        let events = ControlEvents(queue: queue)
        self.events = events
        let songIndex = SongIndex()
        let stickerDatabase = StickerDatabase(stickers, queue: queue, logger: logger)
        let updater = LibraryUpdater(library: library, songIndex: songIndex, events: events, queue: queue, logger: logger,
                                     file: stateDirectory.appendingPathComponent("database.json"),
                                     follower: StickersFollowLibrary(stickers: stickerDatabase, events: events, logger: logger))
        let outputs = AudioOutputs(outputs: [.init(name: "null", plugin: "null")], switch: nil)
        let playbackMemory = memory.map {
            PlaybackMemory(stickers: stickerDatabase, options: $0, podcasts: library.root.appendingPathComponent("Podcasts"),
                           events: events, queue: queue, logger: logger)
        }
        partition = Partition(queue: queue, player: player, library: library, songIndex: songIndex, events: events,
                              outputs: outputs, memory: playbackMemory, logger: logger)
        instance = Instance(library: library, songIndex: songIndex, updater: updater,
                            storedPlaylists: StoredPlaylists(directory: stateDirectory.appendingPathComponent("playlists")),
                            remotePlaylists: RemotePlaylists(fetcher: nil), stickers: stickerDatabase, access: access,
                            outputs: outputs, transfers: TransferCount(),
                            messages: MessageChannels(queue: queue, events: events, remoteNotifications: nil),
                            location: nil, shutdown: shutdown, application: AlwaysActiveContext(), events: events)
        commands = CommandDispatcher(instance: instance, partition: partition, logger: logger)
    }

    /// What a connection uses, its work run by `scheduler`.
    func environment(scheduler: any ConnectionScheduler) -> ClientEnvironment {
        ClientEnvironment(runner: SessionRunner(executor: commands, scheduler: scheduler, remotePlaylists: instance.remotePlaylists,
                                                access: instance.access),
                          events: events, partition: partition, stickers: instance.stickers, messages: instance.messages)
    }
}

/// A `kill` that stops nothing: who asked, in order.
final class ShutdownRequests: DaemonShutdown {
    private let asked = Mutex<[String]>([])

    var peers: [String] { asked.withLock { $0 } }

    func kill(askedBy peer: String) {
        asked.withLock { $0.append(peer) }
    }
}

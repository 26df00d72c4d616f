import Dispatch
import Logging
import MPDProtocol

/// One subject's commands (MPD's `src/command/` files): the kinds of command it runs
/// (``kinds``), and their replies.
protocol CommandHandler {
    /// The commands it runs. Every command the daemon runs (every ``MPDProtocol/Command/Kind``
    /// that ``MPDProtocol/Command/isHandledBySession`` leaves to it) is in exactly one handler's
    /// list; ``CommandDispatcher`` checks it when it is made.
    static var kinds: [Command.Kind] { get }

    /// The reply to `command`, one of ``kinds``; nil for another (a handler given a command it
    /// does not run answers nothing rather than something wrong).
    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply?
}

/// Hands each command a session passes on to the handler of its kind, looked up in a table
/// made once from the handlers' ``CommandHandler/kinds``. Each handler is made with the parts
/// of the ``Instance`` and the sides of the ``Partition`` it uses, and no others.
///
/// Before a command runs, the partition catches up with the player (a song that started
/// by itself is accounted for first), so every command sees the queue as it is heard.
/// `@unchecked Sendable`: made on any thread and not changed after; every handler is confined
/// to the partition's queue, which ``execute(_:context:)`` checks.
package final class CommandDispatcher: CommandExecutor, @unchecked Sendable {
    /// Where every command runs.
    private let queue: PartitionQueue
    /// What each command first catches up with the player.
    private let playback: any PlaybackReading
    private let events: ControlEvents
    private let handlers: [any CommandHandler]
    /// The index in ``handlers`` of each kind's handler, by the kind's raw value; nil for the
    /// commands the session answers.
    private let handlerIndex: [Int?]

    /// The handlers' types, in the order ``init(instance:partition:logger:)`` makes them.
    static let handlerTypes: [any CommandHandler.Type] = [
        PlayerCommands.self, QueueCommands.self, PlaylistCommands.self, MessageCommands.self, OutputCommands.self,
        LibraryCommands.self, PictureCommands.self, FileCommands.self, ClientCommands.self, LocationCommands.self,
        StickerCommands.self, LoudnessCommands.self, SleepCommands.self, PaceCommands.self, ChapterCommands.self,
    ]

    /// - Parameter partition: what plays, handed to each handler as the sides it uses; the
    ///   dispatcher keeps only its queue and its catching up with the player.
    package init(instance: Instance, partition: Partition, logger: Logger) {
        queue = partition.queue
        playback = partition
        events = instance.events
        let events = instance.events
        handlers = [
            PlayerCommands(playback: partition, application: instance.application,
                           status: StatusReport.Sources(updater: instance.updater, transfers: instance.transfers,
                                                        application: instance.application),
                           events: events),
            QueueCommands(queue: partition, library: instance.library),
            PlaylistCommands(queue: partition, playlists: instance.storedPlaylists, remotePlaylists: instance.remotePlaylists,
                             library: instance.library, songIndex: instance.songIndex, events: events),
            MessageCommands(channels: instance.messages),
            OutputCommands(outputs: instance.outputs, holding: partition, events: events),
            LibraryCommands(queue: partition, library: instance.library, updater: instance.updater,
                            storedPlaylists: instance.storedPlaylists, application: instance.application, events: events),
            PictureCommands(library: instance.library),
            FileCommands(library: instance.library, updater: instance.updater),
            ClientCommands(access: instance.access, shutdown: instance.shutdown),
            LocationCommands(location: instance.location),
            StickerCommands(stickers: instance.stickers, updater: instance.updater, events: events, logger: logger),
            LoudnessCommands(gains: partition.gains, holding: partition, library: instance.library, scans: instance.loudness,
                             application: instance.application, events: events),
            SleepCommands(playback: partition, application: instance.application, songIndex: instance.songIndex,
                          library: instance.library),
            PaceCommands(pace: partition.pace),
            ChapterCommands(playback: partition, library: instance.library, songIndex: instance.songIndex, logger: logger),
        ]
        precondition(handlers.map { ObjectIdentifier(type(of: $0)) } == Self.handlerTypes.map { ObjectIdentifier($0) },
                     "the handlers are made in handlerTypes' order")
        let problems = Self.routingProblems()
        precondition(problems.isEmpty, problems.joined(separator: "; "))
        handlerIndex = Self.routes()
    }

    /// For each kind (by raw value), the index in ``handlerTypes`` of the handler that lists it
    /// (the last one, if several do).
    private static func routes() -> [Int?] {
        var index = [Int?](repeating: nil, count: Command.Kind.allCases.count)
        for (position, type) in handlerTypes.enumerated() {
            for kind in type.kinds { index[kind.rawValue] = position }
        }
        return index
    }

    /// What is wrong with the handlers' lists: a kind the daemon runs that no handler or
    /// several list, or a kind the session answers that one lists. Empty when each command
    /// has its one handler.
    static func routingProblems() -> [String] {
        var problems: [String] = []
        for kind in Command.Kind.allCases {
            let owners = handlerTypes.filter { $0.kinds.contains(kind) }.map { "\($0)" }
            if kind.isHandledBySession {
                if !owners.isEmpty { problems.append("\(kind.name) is the session's, yet \(owners) list it") }
            } else if owners.count != 1 {
                problems.append("\(kind.name) has \(owners.count) handlers \(owners)")
            }
        }
        return problems
    }

    package func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
        queue.assertOwned()
        playback.syncWithPlayer()
        // Whatever a command changes, a kept `status` or `currentsong` may no longer say.
        defer {
            switch command {
            case .status, .currentsong: break
            default: events.statusSnapshot.invalidate()
            }
        }
        // Protocol-level commands never reach the executor (ClientSession answers them).
        guard let index = handlerIndex[command.kind.rawValue],
              let reply = try handlers[index].execute(command, context: context) else {
            throw MPDError(.unknown, "unknown command \"\(command.name)\"")
        }
        return reply
    }
}

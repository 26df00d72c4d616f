import Dispatch
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
/// made once from the handlers' ``CommandHandler/kinds``.
///
/// Before a command runs, the partition catches up with the player (a song that started
/// by itself is accounted for first), so every command sees the queue as it is heard.
/// Confined to the partition's queue, as every handler is.
final class CommandDispatcher: CommandExecutor {
    private unowned let partition: Partition
    private let messages: MessageCommands
    private let handlers: [any CommandHandler]
    /// The index in ``handlers`` of each kind's handler, by the kind's raw value; nil for the
    /// commands the session answers.
    private let handlerIndex: [Int?]

    /// The handlers' types, in the order ``init(partition:)`` makes them.
    static let handlerTypes: [any CommandHandler.Type] = [
        PlayerCommands.self, QueueCommands.self, PlaylistCommands.self, MessageCommands.self, OutputCommands.self,
        LibraryCommands.self, PictureCommands.self, FileCommands.self, ClientCommands.self, LocationCommands.self,
        StickerCommands.self,
    ]

    init(partition: Partition) {
        self.partition = partition
        messages = MessageCommands(events: partition.events) { [unowned partition] text in
            partition.remoteNotification(text)
        }
        handlers = [
            PlayerCommands(partition: partition),
            QueueCommands(partition: partition),
            PlaylistCommands(partition: partition, playlists: partition.storedPlaylists),
            messages,
            OutputCommands(partition: partition),
            LibraryCommands(partition: partition),
            PictureCommands(partition: partition),
            FileCommands(partition: partition),
            ClientCommands(partition: partition),
            LocationCommands(partition: partition),
            StickerCommands(partition: partition),
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

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
        partition.assertOwned()
        partition.syncWithPlayer()
        // Whatever a command changes, a kept `status` or `currentsong` may no longer say.
        defer {
            switch command {
            case .status, .currentsong: break
            default: partition.events.statusSnapshot.invalidate()
            }
        }
        // Protocol-level commands never reach the executor (ClientSession answers them).
        guard let index = handlerIndex[command.kind.rawValue],
              let reply = try handlers[index].execute(command, context: context) else {
            throw MPDError(.unknown, "unknown command \"\(command.name)\"")
        }
        return reply
    }

    /// A client went away: its message subscriptions and unread messages go with it.
    func clientDidDisconnect(_ client: Int) {
        messages.clientDidDisconnect(client)
    }
}

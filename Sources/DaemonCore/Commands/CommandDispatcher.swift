import Dispatch
import MPDProtocol

/// One subject's commands (MPD's `src/command/` files): returns the reply of a command it
/// handles, or nil for one that is not its own.
protocol CommandHandler {
    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply?
}

/// Hands each command a session passes on to the handler of its subject.
///
/// Before a command runs, the partition catches up with the player (a song that started
/// by itself is accounted for first), so every command sees the queue as it is heard.
/// Confined to the partition's queue, as every handler is.
final class CommandDispatcher: CommandExecutor {
    private unowned let partition: Partition
    private let messages: MessageCommands
    private let handlers: [any CommandHandler]

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
        for handler in handlers {
            if let reply = try handler.execute(command, context: context) { return reply }
        }
        // Protocol-level commands never reach the executor (ClientSession answers them).
        throw MPDError(.unknown, "unknown command \"\(command.name)\"")
    }

    /// A client went away: its message subscriptions and unread messages go with it.
    func clientDidDisconnect(_ client: Int) {
        messages.clientDidDisconnect(client)
    }
}

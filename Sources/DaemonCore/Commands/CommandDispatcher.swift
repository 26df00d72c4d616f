import Dispatch
import MPDProtocol

/// One subject's commands (MPD's `src/command/` files): returns the reply of a command it
/// handles, or nil for one that is not its own.
protocol CommandHandler {
    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply?
}

/// Hands each command a session passes on to the handler of its subject.
///
/// Before a command runs, the controller catches up with the player (a song that started
/// by itself is accounted for first), so every command sees the queue as it is heard.
/// Confined to the controller's queue, as every handler is.
final class CommandDispatcher: CommandExecutor, @unchecked Sendable {
    private unowned let controller: PlaybackController
    private let messages: MessageCommands
    private let handlers: [any CommandHandler]

    init(controller: PlaybackController) {
        self.controller = controller
        messages = MessageCommands(events: controller.events) { [unowned controller] text in
            controller.remoteNotification(text)
        }
        handlers = [
            PlayerCommands(controller: controller),
            QueueCommands(controller: controller),
            PlaylistCommands(controller: controller, playlists: controller.storedPlaylists),
            messages,
            OutputCommands(controller: controller),
            LibraryCommands(controller: controller),
            PictureCommands(controller: controller),
        ]
    }

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
        dispatchPrecondition(condition: .onQueue(controller.queue))
        controller.syncWithPlayer()
        // Whatever a command changes, a kept `status` or `currentsong` may no longer say.
        defer {
            switch command {
            case .status, .currentsong: break
            default: controller.events.statusSnapshot.invalidate()
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

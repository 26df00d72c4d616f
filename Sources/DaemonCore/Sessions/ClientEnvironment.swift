/// What a client's connection, the control socket's or a WebSocket's, uses of the daemon: the
/// runner its session is lent to, the idle events, the player's published state (`status` and
/// `currentsong` answered on the event loop), which commands the daemon lacks, and the
/// channels that forget a client that goes.
struct ClientEnvironment: Sendable {
    /// Runs the session's commands off the event loop.
    let runner: SessionRunner
    let events: ControlEvents
    /// The player's state, read from any thread (`status` answered on the loop, a WebSocket's ticks).
    let playback: any PublishedPlayback
    /// The partition's queue: a client's leaving is taken in there, as the unasked events are.
    let queue: PartitionQueue
    /// Whether `sticker` is among the commands (``StickerDatabase/unavailableCommands``).
    let stickers: StickerDatabase
    /// The client-to-client channels.
    let messages: MessageChannels

    /// Where the connection's work runs, and how it comes back to its loop.
    var scheduler: any ConnectionScheduler { runner.scheduler }

    /// The commands a new session leaves out of `commands`.
    var unavailableCommands: Set<String> { stickers.unavailableCommands }

    /// A client went away: its subscriptions and unread messages go, on the partition's queue.
    func clientDidDisconnect(_ client: Int) {
        let messages = messages
        queue.async { messages.clientDidDisconnect(client) }
    }
}

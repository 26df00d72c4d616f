/// What a client's connection, the control socket's or a WebSocket's, uses of the daemon: the
/// runner its session is lent to, the idle events, the player's published state (`status` and
/// `currentsong` answered on the event loop), which commands the daemon lacks, and the
/// channels that forget a client that goes.
package struct ClientEnvironment: Sendable {
    /// Runs the session's commands off the event loop.
    package let runner: SessionRunner
    package let events: ControlEvents
    /// The player's state, read from any thread (`status` answered on the loop, a WebSocket's ticks).
    package let playback: any PublishedPlayback
    /// The partition's queue: a client's leaving is taken in there, as the unasked events are.
    package let queue: PartitionQueue
    /// Whether `sticker` is among the commands (``StickerDatabase/unavailableCommands``).
    let stickers: StickerDatabase
    /// The client-to-client channels.
    let messages: MessageChannels

    package init(runner: SessionRunner, events: ControlEvents, playback: any PublishedPlayback, queue: PartitionQueue, stickers: StickerDatabase, messages: MessageChannels) {
        self.runner = runner
        self.events = events
        self.playback = playback
        self.queue = queue
        self.stickers = stickers
        self.messages = messages
    }

    /// Where the connection's work runs, and how it comes back to its loop.
    package var scheduler: any ConnectionScheduler { runner.scheduler }

    /// The commands a new session leaves out of `commands`.
    package var unavailableCommands: Set<String> { stickers.unavailableCommands }

    /// A client went away: its subscriptions and unread messages go, on the partition's queue.
    package func clientDidDisconnect(_ client: Int) {
        let messages = messages
        queue.async { messages.clientDidDisconnect(client) }
    }
}

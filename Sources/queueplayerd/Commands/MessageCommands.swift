import MPDProtocol

/// Client-to-client messages (MPD's `MessageCommands.cxx`) over a ``MessageHub``.
///
/// A reference type: the hub is the daemon's one set of channels. Confined to the
/// controller's queue, like every handler.
final class MessageCommands: CommandHandler, @unchecked Sendable {
    private var hub = MessageHub()
    private let events: ControlEvents

    init(events: ControlEvents) {
        self.events = events
    }

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        var reply = Reply()
        switch command {
        case .subscribe(let channel):
            try hub.subscribe(context.clientID, to: channel)
            events.post([.subscription])
        case .unsubscribe(let channel):
            try hub.unsubscribe(context.clientID, from: channel)
            events.post([.subscription])
        case .channels:
            for channel in hub.channels { reply.append("channel", channel) }
        case .sendmessage(let channel, let text):
            let woken = try hub.send(text, to: channel)
            events.post([.message], toClients: woken)
        case .readmessages:
            for message in hub.read(context.clientID) {
                reply.append("channel", message.channel)
                reply.append("message", message.text)
            }
        default:
            return nil
        }
        return reply
    }

    /// Forgets a client that went away.
    func clientDidDisconnect(_ client: Int) {
        if hub.remove(client) { events.post([.subscription]) }
    }
}

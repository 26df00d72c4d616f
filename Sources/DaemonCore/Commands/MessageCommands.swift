import MPDProtocol

/// Client-to-client messages (MPD's `MessageCommands.cxx`) over a ``MessageHub``.
///
/// The daemon is itself a subscriber, to the channel `queueplayerd`: a message sent there is
/// a remote notification (a silent push), handed to `daemonMessage` as it is sent. It still
/// reaches the clients subscribed to that channel, and `sendmessage` to it never fails with
/// "nobody is subscribed". The daemon's own subscription is client 0, which no connection
/// has (they count from 1), and never gets a `message` idle event.
///
/// A reference type: the hub is the daemon's one set of channels. Confined to the
/// partition's queue, like every handler.
final class MessageCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .subscribe, .unsubscribe, .channels, .sendmessage, .readmessages,
    ]

    /// The daemon's own place in the hub.
    static let daemonClient: MessageHub.ClientID = 0
    /// The channel the daemon listens on.
    static let daemonChannel = "queueplayerd"

    private var hub = MessageHub()
    private let events: ControlEvents
    private let daemonMessage: (String) -> Void

    /// `daemonMessage` gets the text of each message sent to ``daemonChannel``, on the partition's queue.
    init(events: ControlEvents, daemonMessage: @escaping (String) -> Void) {
        self.events = events
        self.daemonMessage = daemonMessage
        try? hub.subscribe(Self.daemonClient, to: Self.daemonChannel)
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
            events.post([.message], toClients: woken.filter { $0 != Self.daemonClient })
            for message in hub.read(Self.daemonClient) { daemonMessage(message.text) }
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

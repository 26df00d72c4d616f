import MPDProtocol

/// Client-to-client messages (MPD's `MessageCommands.cxx`) over the daemon's
/// ``MessageChannels`` (a message to `queueplayerd` is a remote notification).
struct MessageCommands: CommandHandler {
    static let kinds: [Command.Kind] = [
        .subscribe, .unsubscribe, .channels, .sendmessage, .readmessages,
    ]

    let channels: MessageChannels

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        var reply = Reply()
        switch command {
        case .subscribe(let channel):
            try channels.subscribe(context.clientID, to: channel)
        case .unsubscribe(let channel):
            try channels.unsubscribe(context.clientID, from: channel)
        case .channels:
            for channel in channels.channels { reply.append("channel", channel) }
        case .sendmessage(let channel, let text):
            try channels.send(text, to: channel)
        case .readmessages:
            for message in channels.read(context.clientID) {
                reply.append("channel", message.channel)
                reply.append("message", message.text)
            }
        default:
            return nil
        }
        return reply
    }
}

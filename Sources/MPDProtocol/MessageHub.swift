/// Client-to-client messages: MPD's channels, as `subscribe`, `unsubscribe`, `channels`,
/// `sendmessage` and `readmessages` use them.
///
/// A message goes to every client subscribed to its channel at the moment it is sent and
/// waits in that client's inbox until it reads it. Limits and error texts are MPD's: 16
/// subscriptions and 64 unread messages per client (a full inbox drops new messages for that
/// client only), channel names of letters, digits and `_-.:`.
///
/// It is a value with no I/O: the daemon keeps one on its controller queue and turns the
/// returned idle events into `changed: message` (for the clients named) and `changed:
/// subscription` (for everyone).
public struct MessageHub: Sendable {
    /// A connected client, as the daemon numbers them.
    public typealias ClientID = Int

    /// One unread message.
    public struct Message: Sendable, Equatable {
        public var channel: String
        public var text: String

        public init(channel: String, text: String) {
            self.channel = channel
            self.text = text
        }
    }

    public static let maxSubscriptions = 16
    public static let maxUnreadMessages = 64

    private var subscriptions: [ClientID: Set<String>] = [:]
    private var inboxes: [ClientID: [Message]] = [:]

    public init() {}

    /// Forgets a client that disconnected: its subscriptions and unread messages.
    /// Returns true if that changed the set of channels (a `subscription` event).
    @discardableResult
    public mutating func remove(_ client: ClientID) -> Bool {
        let had = !(subscriptions[client]?.isEmpty ?? true)
        subscriptions[client] = nil
        inboxes[client] = nil
        return had
    }

    /// `subscribe CHANNEL`.
    public mutating func subscribe(_ client: ClientID, to channel: String) throws(MPDError) {
        guard Self.isValidChannelName(channel) else { throw MPDError(.argument, "invalid channel name") }
        var channels = subscriptions[client, default: []]
        guard channels.count < Self.maxSubscriptions else { throw MPDError(.exist, "subscription list is full") }
        guard channels.insert(channel).inserted else { throw MPDError(.exist, "already subscribed to this channel") }
        subscriptions[client] = channels
    }

    /// `unsubscribe CHANNEL`.
    public mutating func unsubscribe(_ client: ClientID, from channel: String) throws(MPDError) {
        guard subscriptions[client]?.remove(channel) != nil else {
            throw MPDError(.noExist, "not subscribed to this channel")
        }
    }

    /// `channels`: every channel someone is subscribed to, sorted.
    public var channels: [String] {
        Set(subscriptions.values.joined()).sorted()
    }

    /// True if `client` is subscribed to `channel`.
    public func isSubscribed(_ client: ClientID, to channel: String) -> Bool {
        subscriptions[client]?.contains(channel) ?? false
    }

    /// `sendmessage CHANNEL TEXT`. Returns the clients whose inbox was empty before: they get
    /// a `message` idle event (a client already holding unread messages was told before).
    public mutating func send(_ text: String, to channel: String) throws(MPDError) -> [ClientID] {
        guard Self.isValidChannelName(channel) else { throw MPDError(.argument, "invalid channel name") }
        var delivered = false
        var woken: [ClientID] = []
        for (client, channels) in subscriptions where channels.contains(channel) {
            var inbox = inboxes[client, default: []]
            guard inbox.count < Self.maxUnreadMessages else { continue }
            if inbox.isEmpty { woken.append(client) }
            inbox.append(Message(channel: channel, text: text))
            inboxes[client] = inbox
            delivered = true
        }
        guard delivered else { throw MPDError(.noExist, "nobody is subscribed to this channel") }
        return woken.sorted()
    }

    /// `readmessages`: the client's unread messages, oldest first, and its inbox emptied.
    public mutating func read(_ client: ClientID) -> [Message] {
        inboxes.removeValue(forKey: client) ?? []
    }

    /// MPD's rule: one or more of letters, digits, `_`, `-`, `.` and `:`.
    public static func isValidChannelName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
        }
    }
}

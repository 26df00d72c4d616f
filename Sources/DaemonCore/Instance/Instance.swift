import Dispatch
import Logging
import MPDProtocol
import Synchronization

/// MPD's `Instance`: what the daemon has once, whatever plays (the ``Partition`` has the queue,
/// the player and the announcements). Built by ``Daemon`` with every part it holds, in the order
/// their dependencies ask for: nothing is handed to it after `init`.
///
/// The command handlers take from it the parts they use (``CommandDispatcher``). Its parts
/// with state belong to the partition's queue (the daemon's one serial queue), as the
/// partition's own do; the instance itself is only `let`s.
final class Instance {
    /// The music directory.
    let library: MusicLibrary
    /// The songs' tags and durations (the partition makes its queued songs from them too).
    let songIndex: SongIndex
    /// `update`'s scans of the music directory, and the database they keep.
    let updater: LibraryUpdater
    /// The stored playlists, beside the saved state.
    let storedPlaylists: StoredPlaylists
    /// Remote `.m3u` and `.pls` playlists, fetched before the command that names them runs.
    let remotePlaylists: RemotePlaylists
    /// `--sticker-file`.
    let stickers: StickerDatabase
    /// The passwords and permissions (`password`).
    let access: AccessPolicy
    /// The audio outputs and their switches (`outputs`, `enableoutput`, ...).
    let outputs: AudioOutputs
    /// How many podcast episodes are downloading (`status`'s `transfers`).
    let transfers: TransferCount
    /// The client-to-client channels, and the daemon's own (remote notifications).
    let messages: MessageChannels
    /// `--location` and `--regions`; nil without.
    let location: LocationService?
    /// Stops the daemon as SIGTERM does (`kill`).
    let shutdown: any DaemonShutdown
    /// The daemon's life cycle (foreground, background, suspended).
    let application: any ApplicationContext
    /// The idle events.
    let events: ControlEvents
    /// Loudness measurements (`loudnessscan`, downloaded episodes); nil in a daemon made without.
    let loudness: LoudnessScans?

    init(library: MusicLibrary, songIndex: SongIndex, updater: LibraryUpdater, storedPlaylists: StoredPlaylists,
         remotePlaylists: RemotePlaylists, stickers: StickerDatabase, access: AccessPolicy, outputs: AudioOutputs,
         transfers: TransferCount, messages: MessageChannels, location: LocationService?, shutdown: any DaemonShutdown,
         application: any ApplicationContext, events: ControlEvents, loudness: LoudnessScans? = nil) {
        self.loudness = loudness
        self.library = library
        self.songIndex = songIndex
        self.updater = updater
        self.storedPlaylists = storedPlaylists
        self.remotePlaylists = remotePlaylists
        self.stickers = stickers
        self.access = access
        self.outputs = outputs
        self.transfers = transfers
        self.messages = messages
        self.location = location
        self.shutdown = shutdown
        self.application = application
        self.events = events
    }
}

/// Stops the daemon as SIGTERM does (`kill`), given who asked.
protocol DaemonShutdown: Sendable {
    func kill(askedBy peer: String)
}

/// The daemon's `kill`: ends its part, so the service group stops the others in their order.
struct KillPart: DaemonShutdown {
    let part: DaemonPart
    let logger: Logger

    func kill(askedBy peer: String) {
        logger.info("kill from \(peer): stopping")
        part.end()
    }
}

/// Gets the text of each message sent to the channel `queueplayerd` (a remote notification).
protocol RemoteNotificationReceiver: Sendable {
    func handleRemoteNotification(_ text: String)
}

extension FeedService: RemoteNotificationReceiver {}

/// How many podcast episodes are downloading, as the downloads last said (``TransfersShown``);
/// from any thread.
final class TransferCount: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func set(_ value: Int) {
        count.store(value, ordering: .relaxed)
    }
}

/// MPD's client-to-client channels (``MessageHub``), one set for the daemon. The daemon is
/// itself a subscriber, to the channel `queueplayerd`: a message sent there is a remote
/// notification (a silent push), handed to the receiver as it is sent. It still reaches the
/// clients subscribed to that channel, and `sendmessage` to it never fails with "nobody is
/// subscribed". The daemon's own subscription is client 0, which no connection has (they
/// count from 1), and never gets a `message` idle event.
///
/// `Sendable`: the hub belongs to the partition's queue (`QueueBound`).
final class MessageChannels: Sendable {
    /// The daemon's own place in the hub.
    static let daemonClient: MessageHub.ClientID = 0
    /// The channel the daemon listens on.
    static let daemonChannel = "queueplayerd"

    private let hub: QueueBound<MessageHub>
    private let events: ControlEvents
    private let remoteNotifications: (any RemoteNotificationReceiver)?

    /// `remoteNotifications` gets the text of each message sent to ``daemonChannel``, on the
    /// partition's queue (nil: no one does).
    init(queue: DispatchQueue, events: ControlEvents, remoteNotifications: (any RemoteNotificationReceiver)?) {
        var hub = MessageHub()
        try? hub.subscribe(Self.daemonClient, to: Self.daemonChannel)
        self.hub = QueueBound(hub, on: queue)
        self.events = events
        self.remoteNotifications = remoteNotifications
    }

    func subscribe(_ client: Int, to channel: String) throws(MPDError) {
        try hub.value.subscribe(client, to: channel)
        events.post([.subscription])
    }

    func unsubscribe(_ client: Int, from channel: String) throws(MPDError) {
        try hub.value.unsubscribe(client, from: channel)
        events.post([.subscription])
    }

    var channels: [String] { hub.value.channels }

    /// Sends `text` to the clients subscribed to `channel` (a `message` idle event wakes them),
    /// and to the daemon if it is its channel.
    func send(_ text: String, to channel: String) throws(MPDError) {
        let woken = try hub.value.send(text, to: channel)
        events.post([.message], toClients: woken.filter { $0 != Self.daemonClient })
        for message in hub.value.read(Self.daemonClient) { remoteNotifications?.handleRemoteNotification(message.text) }
    }

    /// The messages waiting for `client`, taken.
    func read(_ client: Int) -> [MessageHub.Message] {
        hub.value.read(client)
    }

    /// Forgets a client that went away.
    func clientDidDisconnect(_ client: Int) {
        if hub.value.remove(client) { events.post([.subscription]) }
    }
}

import AppLifecycle
import DaemonCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import QueuePlayer
import Synchronization

/// The WebSocket clients connected now, and the events every one of them gets unasked: the
/// current item (the player's `currentItem`, observed as KVO) and the application's life-cycle
/// state. (The downloads' progress is ``DownloadProgressPublisher``'s, the location's
/// ``LocationEvents``'; both broadcast through this registry.) (What `idle` reports each client gets through its own
/// subscription to ``ControlEvents``, so that a `message` reaches only the clients subscribed
/// to its channel, as on the control socket.)
///
/// The registry is under a mutex: clients come and go on their own tasks, events arrive on the
/// partition's queue.
package final class WebClients: Sendable {
    package init() {}

    /// The most WebSocket clients at once; one more is closed with code 1013 (try again later).
    static let limit = 32

    private let clients = Mutex<[Int: WebSocketClient]>([:])
    /// Numbers the clients for the command layer (message subscriptions, `clientDidDisconnect`),
    /// in a range the control socket's clients (counted from 1) never reach.
    private let nextID = Atomic<Int>(1 << 40)

    func makeID() -> Int { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    /// Adds a client, unless ``limit`` are connected.
    func admit(_ client: WebSocketClient) -> Bool {
        clients.withLock { clients in
            guard clients.count < Self.limit else { return false }
            clients[client.id] = client
            return true
        }
    }

    func remove(_ client: WebSocketClient) {
        _ = clients.withLock { $0.removeValue(forKey: client.id) }
    }

    var count: Int { clients.withLock { $0.count } }

    /// Pushes `message` to every client that may read (encoded once; ``WebSocketClient/push(text:)``).
    func broadcast(_ message: JSONValue) {
        let text = message.encoded
        for client in clients.withLock({ Array($0.values) }) { client.push(text: text) }
    }

    // MARK: Events

    /// `{"event": "currentItem", "song": {...}}` with the current song as `currentsong` gives
    /// it, or `"song": null`. On the partition's queue.
    static func currentItemEvent(on queue: PartitionQueue, commands: any CommandExecutor) -> JSONValue {
        queue.assertOwned()
        let reply: Reply
        do {
            reply = try commands.execute(.currentsong, context: CommandContext())
        } catch {
            reply = Reply()
        }
        guard case .object(let fields) = ReplyJSON.answer(command: Command.currentsong.name, actions: [.send(reply.rendered())]),
              case .object(let song)? = fields.first(where: { $0.0 == "ok" })?.1 else {
            return .object([("event", .string("currentItem")), ("song", .null)])
        }
        return .object([("event", .string("currentItem")), ("song", song.isEmpty ? .null : .object(song))])
    }

    /// `{"event": "stream", "songid": 3, "name": "Radio X", "title": "Artist - Song"}`: a
    /// stream's ICY name and title (null until the stream sends one).
    static func streamEvent(_ item: PlayerItem, songID: Int?) -> JSONValue {
        .object([("event", .string("stream")), ("songid", songID.map { .int($0) } ?? .null),
                 ("name", item.streamName.map { .string($0) } ?? .null),
                 ("title", item.streamTitle.map { .string($0) } ?? .null)])
    }

    /// `{"event": "lifecycle", "state": "background"}`.
    static func lifecycleEvent(_ state: ApplicationState) -> JSONValue {
        .object([("event", .string("lifecycle")), ("state", .string(state.rawValue))])
    }

    /// `{"event": "idle", "changed": ["player", "mixer"]}`: what `idle` would report.
    static func idleEvent(_ changed: Set<Subsystem>) -> JSONValue {
        .object([("event", .string("idle")),
                 ("changed", .array(changed.map(\.rawValue).sorted().map { .string($0) }))])
    }
}

extension WebClients: LocationListener {
    /// Each fix, and each region entered or left, to every client (``LocationEvents``).
    package func heard(_ event: LocationService.Event) {
        switch event {
        case .fixes(let fixes):
            for fix in fixes { broadcast(LocationEvents.event(fix)) }
        case .region(let identifier, let entered):
            broadcast(LocationEvents.region(identifier, entered: entered))
        }
    }
}

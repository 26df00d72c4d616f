import AppLifecycle
import DaemonCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import FeedFetch
import Logging
import MPDProtocol
import NIOCore
import NIOHTTP1
import QueuePlayer
import ServiceLifecycle
import NIOWebSocket

/// `--http`: the web page at `/` and the WebSocket API at `/ws` (docs/websocket.md),
/// served by hummingbird on the control server's event loop, as one more service of the
/// daemon's `ServiceGroup` (stopped, before the control server's event loop, with the others).
///
/// Nothing here blocks the event loop: requests are answered from bytes compiled into the
/// binary (``WebResources``); a WebSocket's commands run on the partition's queue as the
/// socket's do (``WebSocketClient``), its ticks come from the player's time observers on the
/// clock thread and go out through a bounded buffer per client.
package final class WebServer: Service, Sendable {
    /// What `--http` and `--http-token-file` say.
    package struct Options: Sendable {
        var address: HTTPListenAddress
        /// The token every request must carry; required for a bind other than loopback.
        var token: String?
        /// How long a request may take to come in (``HTTPRequestGuard``).
        package var requestTimeout: TimeAmount = WebServer.requestTimeout

        package init(address: HTTPListenAddress, token: String?, requestTimeout: TimeAmount = WebServer.requestTimeout) {
            self.address = address
            self.token = token
            self.requestTimeout = requestTimeout
        }
    }

    /// How long a request may take to come in, by default: a browser sends its request at once,
    /// and a connection that sends nothing, or trickles its header, holds one of the
    /// ``maximumConnections``.
    static let requestTimeout = TimeAmount.seconds(20)

    /// Why the server could not start (a port in use).
    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    /// The largest WebSocket message a client may send (a command line is at most 4 KiB).
    static let maximumMessageSize = 64 * 1024
    /// The most HTTP connections at once (pages and WebSockets); more wait to be accepted.
    static let maximumConnections = 64

    private let options: Options
    private let gate: WebAccessGate
    /// The control socket's passwords and permissions, which the WebSocket's commands are held to.
    private let policy: AccessPolicy
    /// What each WebSocket client uses of the daemon, as a control-socket client does.
    private let environment: ClientEnvironment
    private var queue: PartitionQueue { environment.queue }
    private var events: ControlEvents { environment.events }
    private var player: QueuePlayer { environment.playback.player }
    private let application: AppLifecycle.Application
    private let group: any EventLoopGroup
    private let logger: Logger
    /// The WebSocket clients, made before the server: the location service tells them its events.
    let clients: WebClients
    /// The downloads' progress, when there are downloads (a music directory).
    private let downloads: DownloadProgressPublisher?
    /// The location updates, with `--location`.
    private let location: LocationService?

    package init(options: Options, environment: ClientEnvironment, application: AppLifecycle.Application,
         group: any EventLoopGroup, clients: WebClients, downloads: TransferProgressBoard?, location: LocationService?,
         logger: Logger) {
        policy = environment.runner.access
        self.clients = clients
        self.environment = environment
        self.downloads = downloads.map { [clients] in DownloadProgressPublisher(board: $0, clients: clients) }
        self.location = location
        self.options = options
        gate = WebAccessGate(access: WebAccess(address: options.address, token: options.token), logger: logger)
        self.application = application
        self.group = group
        self.logger = logger
    }

    /// The shortest token `--http-token-file` may give, in bytes: 16 random characters are more
    /// than can be guessed at the pace failures are answered (``TokenFailureSchedule``).
    static let minimumTokenLength = 16

    /// Reads `--http-token-file`: its first line, which must be at least ``minimumTokenLength`` bytes.
    package static func readToken(file: String) throws(DaemonOptionError) -> String {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw DaemonOptionError("--http-token-file \(file): cannot read the file.")
        }
        let token = text.split(separator: "\n", omittingEmptySubsequences: false).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else { throw DaemonOptionError("--http-token-file \(file): the file's first line is empty.") }
        guard token.utf8.count >= minimumTokenLength else {
            throw DaemonOptionError("--http-token-file \(file): the token is \(token.utf8.count) bytes long; it must be at least "
                                    + "\(minimumTokenLength) (e.g. the output of `head -c 24 /dev/urandom | base64`).")
        }
        return token
    }

    // MARK: Service

    package func run() async throws {
        let observations = observe()
        defer {
            for observation in observations {
                if let token = observation as? any NSObjectProtocol { application.notificationCenter.removeObserver(token) }
            }
        }
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(120)),
            // Text messages that are not UTF-8 close the connection with 1007 (RFC 6455 8.1).
            ws: .init(maxFrameSize: Self.maximumMessageSize, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(2),
                      validateUTF8: true))
        let (requestTimeout, gate) = (options.requestTimeout, gate)
        let app = Hummingbird.Application(
            router: makeRouter(),
            server: HTTPServerBuilder { [self] responder in
                GuardedUpgradeChannel(
                    base: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration) { head, channel, _ in
                        self.shouldUpgrade(head, channel: channel)
                    },
                    makeGuard: { HTTPRequestGuard(requestTimeout: requestTimeout, checkAccess: gate.refusal(for:peer:)) })
            },
            configuration: .init(address: .hostname(options.address.host, port: options.address.port),
                                 serverName: "queueplayerd",
                                 availableConnectionsDelegate: MaximumAvailableConnections(Self.maximumConnections)),
            onServerRunning: { [logger, options] channel in
                let port = channel.localAddress?.port ?? options.address.port
                let shown = HTTPListenAddress(host: options.address.host, port: port)
                logger.info("web page: http://\(shown)/ (WebSocket API: ws://\(shown)/ws)")
            },
            eventLoopGroupProvider: .shared(group),
            logger: logger)
        do {
            try await app.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw SetupError(description: "--http \(options.address): the address is already in use (another program listens there); "
                                 + "choose another port, or --http off")
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL || error.errnoCode == EACCES {
            throw SetupError(description: "--http \(options.address): cannot listen there: \(error)")
        }
    }

    // MARK: HTTP

    /// The page's files. Every request's access was checked before it came here, by the
    /// ``HTTPRequestGuard`` (``WebAccessGate``).
    private func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        for (path, file) in [("/", "index.html"), ("/index.html", "index.html"), ("/app.js", "app.js"), ("/style.css", "style.css")] {
            router.get(RouterPath(path)) { request, _ -> Response in
                WebResources.response(for: file, settingToken: WebAccess.queryToken(request.uri.query))
            }
        }
        return router
    }

    /// hummingbird's WebSocket-upgrade channel with an ``HTTPRequestGuard`` put before its upgrade
    /// handler, in every connection's pipeline from the start (hummingbird's own
    /// `additionalChannelHandlers` are added only after a first request, and behind the upgrade).
    private struct GuardedUpgradeChannel: ServerChildChannel {
        let base: HTTP1WebSocketUpgradeChannel
        let makeGuard: @Sendable () -> HTTPRequestGuard

        func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
            base.setup(channel: channel, logger: logger).flatMapThrowing { [makeGuard] value in
                let pipeline = channel.pipeline.syncOperations
                let upgrader = try pipeline.handler(type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
                try pipeline.addHandler(makeGuard(), position: .before(upgrader))
                return value
            }
        }

        func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }

    // MARK: WebSocket

    private func shouldUpgrade(_ head: HTTPRequest, channel: any Channel) -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let path = (head.path ?? "").split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        // Its access was checked before (``HTTPRequestGuard``), and a refusal answered there.
        guard path == "/ws" else { return .dontUpgrade }
        do {
            try channel.pipeline.syncOperations.addHandler(MaskedFrameCheck.Installer())
        } catch {
            return .dontUpgrade
        }
        return .upgrade([:]) { [self] inbound, outbound, _ in
            try await serve(inbound: inbound, outbound: outbound, channel: channel)
        }
    }

    /// One WebSocket connection: this task reads its messages and answers them in order; what the
    /// client is sent goes to the channel's event loop directly (``WebSocketClient/send(text:)``).
    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel) async throws {
        // What a TCP client from a trusted address holds: every WebSocket client is one, from
        // loopback or with the token (which any other address needs), so a remote one with the
        // token is not held to read-only as the control socket's remote clients are; `password`
        // replaces them, as on the socket.
        let permissions = policy.defaultPermissions
        let (downloads, location, queue, environment) = (downloads, location, queue, environment)
        let client = WebSocketClient(id: clients.makeID(), channel: channel, environment: environment,
                                     permissions: permissions, logger: logger) { client in
            // What a client gets on connecting, once it may read (at once, or after a password).
            downloads?.connected(client)
            if let location {
                // The track at once; fixes taken meanwhile were broadcast to this client too, and
                // are in the history it replaces the track with.
                queue.async { client.push(LocationEvents.history(location.fixes)) }
            }
        }
        guard clients.admit(client) else {
            logger.warning("web: \(WebClients.limit) WebSocket clients already; refused one more")
            try await outbound.close(.unknown(1013), reason: "too many connections")
            return
        }
        let (events, id) = (events, client.id)
        events.subscribe(client, client: id) { changed in client.push(WebClients.idleEvent(changed)) }
        client.sendStartingState()
        defer {
            events.unsubscribe(client)
            clients.remove(client)
            client.close()
            environment.clientDidDisconnect(id)
        }
        var session = ClientSession()
        session.clientID = id
        session.permissions = permissions
        session.peer = AccessPolicy.peerName(channel.remoteAddress)
        session.unavailableCommands = environment.unavailableCommands
        for try await message in inbound.messages(maxSize: Self.maximumMessageSize) {
            guard case .text(let text) = message else {
                client.send(.object([("error", ReplyJSON.error(ack: .argument, message: "send text messages of JSON"))]))
                continue
            }
            await client.handle(text, session: &session)
            if session.isClosed { break }
        }
    }

    // MARK: Events

    /// Follows what every client hears of unasked: the current item, the life cycle, the location.
    private func observe() -> [Any] {
        let (clients, queue, application, commands) = (clients, queue, application, environment.runner.executor)
        var observations: [Any] = []
        observations.append(player.observe(\.currentItem, options: [.new]) { _, _ in
            queue.async { clients.broadcast(WebClients.currentItemEvent(on: queue, commands: commands)) }
        })
        let center = application.notificationCenter
        typealias Lifecycle = AppLifecycle.Application
        for name in [Lifecycle.willResignActiveNotification, Lifecycle.didEnterBackgroundNotification,
                     Lifecycle.willEnterForegroundNotification, Lifecycle.didBecomeActiveNotification,
                     Lifecycle.didSuspendNotification, Lifecycle.didWakeNotification] {
            observations.append(center.addObserver(forName: name, object: application, queue: nil) { _ in
                // The application lives on the partition's queue; its state is read there.
                queue.async { clients.broadcast(WebClients.lifecycleEvent(application.state)) }
            })
        }
        return observations
    }
}

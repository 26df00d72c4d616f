import AppLifecycle
import DaemonCore
import Dispatch
import FeedFetch
import Feeds
import Foundation
import HTTPStreaming
import Logging
import MPDProtocol
import MPDServer
import NIOPosix
import QueuePlayer
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebAPI
import Zeroconf

/// The composition root: a player, its observers, the control socket, the
/// application life cycle, the saved state, and the signals that steer them.
///
/// ``run()`` runs the parts as the services of one `ServiceGroup`: the control
/// server's part sets everything up and serves; SIGTERM, SIGINT or (with `--once`) the end of
/// the queue tears them down in the reverse of their order: systemd is told the daemon
/// stops, the status line goes, the control socket closes its clients and its event loop,
/// the state is saved, and the player lets what was written play out and closes.
///
/// `@unchecked Sendable`: its parts are `let`s made in `init`; `retained` (observation tokens)
/// is appended to only while the daemon starts, on the thread that starts it, and never read;
/// `defaultCenterObservers` likewise, read once more after the service group has ended.
public final class Daemon: @unchecked Sendable {
    /// How the daemon was asked to run.
    struct Configuration {
        /// Files to queue at start (from `--media` or the command line).
        var files: [URL]
        /// True if the files were asked for (FILE arguments, or `--media DIR`): they replace a saved queue.
        var filesAreExplicit: Bool
        var exitWhenFinished: Bool
        var backgroundMode: Application.BackgroundMode
        var backgroundTime: Double
        /// Where the state is saved; nil with `--no-state`.
        var stateStore: StateStore?
        /// The podcast feeds to fetch, and how.
        var feeds: FeedService.Options
        /// `--auto-enqueue`: downloaded episodes are appended to the queue.
        var autoEnqueue: Bool
        /// `--max-clients`: the most clients served at once, over every listener.
        var maxClients = ClientLimit.defaultMaximum
        /// `--connection-timeout`: seconds without a complete command before a client that is
        /// not idling is disconnected.
        var connectionTimeout = ControlConnection.defaultTimeout
        /// `--http`: the web page and the WebSocket API; nil: off.
        var web: WebServer.Options? = nil
        /// The process's environment as start-up read it, once (the default state directory,
        /// systemd's variables).
        var environment = ProcessInfo.processInfo.environment
        /// Where the control server listens (``Daemon/listeners(_:)``), and which of those may be
        /// left out when taken (the conventional `localhost:6600`).
        var listeners: [ListenAddress] = []
        var optionalListeners: Set<ListenAddress> = []
        /// `--password`, `--default-permissions`, `--local-permissions`.
        var access = AccessPolicy.open
        /// `--location` and `--regions`; nil: no location updates.
        var location: LocationService.Options?
        /// `--sticker-file`: the sticker database; nil: off.
        var stickerFile: URL?
        /// Whether the sticker file's directory is the daemon's to create (the state directory).
        var createsStickerDirectory = false
        /// `--zeroconf-name` with `%h` replaced; nil: `--no-zeroconf`.
        var zeroconfName: String?
        /// `--resume-rewind` and `--statistics`: what is remembered of the items heard.
        var memory = PlaybackMemory.Options()
        /// `--stream-retry-time`, seconds.
        var streamRetryTime = 300.0
        /// `--replaygain` and the other gain settings.
        var loudness = LoudnessOptions()
        /// `--ca-file`, read: certificates trusted besides the system's for https:// items.
        var trustedCertificates: TrustedCertificates?
        /// Whether the daemon takes the process's signals (SIGTERM and SIGINT stop it, SIGUSR1,
        /// SIGUSR2 and SIGHUP steer it); false for a daemon inside a test process, which keeps them.
        var handlesSignals = true
        /// Where the daemon's own output lines go ("Now playing: ..."): stdout, or a test's record.
        var printLine: @Sendable (String) -> Void = { Console.line($0) }
        /// `--rate`, `--pitch-algorithm`, `--skip-silence`: until a saved state's are restored.
        var pace = PaceSettings()
    }

    private let player: QueuePlayer
    private let partition: Partition
    /// What the daemon has once: the library, stickers, access, feeds' counts, outputs...
    private let instance: Instance
    /// The partition's queue, where the life cycle, the idle events and the signal handlers live
    /// too; only the composition root holds it (to hold it while the socket starts).
    private let partitionQueue: DispatchQueue
    private let events: ControlEvents
    private let server: ControlServer
    private let lifecycle: LifecycleCoordinator
    private let stateKeeper: StateKeeper?
    private let statusLine: StatusLine?
    private let feeds: FeedService
    /// `--http`'s server, if asked for.
    private let web: WebServer?
    private let location: LocationService?
    private let configuration: Configuration
    private let logger: Logger
    private let hasPlayed = Atomic<Bool>(false)
    /// The Zeroconf publication of the TCP listener; nil with `--no-zeroconf`.
    private let zeroconf: AvahiPublisher?
    private let timeQueue = DispatchQueue(label: "queueplayerd.time")
    private let systemd: SystemdService
    /// Observation tokens and sources kept alive for the daemon's lifetime (set once, in `start`).
    private var retained: [Any] = []
    /// The observers of `NotificationCenter.default` (whose notifications are any player's in the
    /// process), removed when the daemon has stopped.
    private var defaultCenterObservers: [NSObjectProtocol] = []
    /// With `--once`: the part that ends when the queue has finished, stopping the daemon.
    private let queueFinished = DaemonPart(endingOnRequest: "queue")
    /// The part that ends at a client's `kill`, stopping the daemon as SIGTERM does.
    private let killed: DaemonPart
    /// The player's decoders; its HTTP client is shut down once the player has closed.
    private let decoders: HTTPStreamingDecoderFactory
    /// What an item that cannot be played does (the log, `status`'s `error`).
    private let failures: PlaybackFailures
    /// What is remembered of the items heard (their places, the play statistics).
    private let memory: PlaybackMemory

    /// Makes the parts, each with what it needs, in the order their dependencies ask for: the
    /// player and the partition's queue; the life cycle; the stickers and the library; the
    /// partition; the event loop (the feeds' HTTP client runs on it); the feeds, with what their
    /// downloads do to the library and the queue; the location; the ``Instance``; the commands;
    /// and the servers, whose clients' sessions run through one ``SessionRunner``.
    init(configuration: Configuration, library: MusicLibrary, outputs: OutputFactory.Outputs, logger: Logger) {
        // Files through libmpg123's reader, http(s):// items through the engine's HTTP streaming
        // (AsyncHTTPClient on NIO's shared event loops), both decoded to the outputs' format.
        var streaming = HTTPStreamingConfiguration(retryTime: configuration.streamRetryTime)
        streaming.trustedCertificates = configuration.trustedCertificates
        streaming.logger = logger
        decoders = HTTPStreamingDecoderFactory(files: MPG123DecoderFactory(outputFormat: outputs.decodeFormat),
                                               outputFormat: outputs.decodeFormat,
                                               configuration: streaming)
        player = QueuePlayer(sink: outputs.sink, decoderFactory: decoders)
        let partitionQueue = DispatchQueue(label: "queueplayerd.partition")
        self.partitionQueue = partitionQueue
        let queue = PartitionQueue(partitionQueue)
        let events = ControlEvents(queue: partitionQueue)
        self.events = events
        let stateDirectory = configuration.stateStore?.file.deletingLastPathComponent()
        let application = Application(backgroundMode: configuration.backgroundMode, backgroundTime: configuration.backgroundTime,
                                      queue: partitionQueue)
        let lifecycle = LifecycleCoordinator(application: application, player: player, logger: logger)
        self.lifecycle = lifecycle
        let stickers = StickerDatabase(queue: partitionQueue, logger: logger)
        let songIndex = SongIndex()
        let updater = LibraryUpdater(library: library, songIndex: songIndex, events: events, queue: partitionQueue, logger: logger,
                                     file: stateDirectory?.appendingPathComponent("database.json"),
                                     follower: StickersFollowLibrary(stickers: stickers, events: events, logger: logger))
        let playlistsHome = stateDirectory ?? StateStore.defaultFile(environment: configuration.environment).deletingLastPathComponent()
        let memory = PlaybackMemory(stickers: stickers, options: configuration.memory,
                                    podcasts: configuration.feeds.musicDirectory?.appendingPathComponent(PodcastFileName.directory),
                                    events: events, queue: partitionQueue, logger: logger)
        self.memory = memory
        let partition = Partition(queue: queue, player: player, songs: SongLookup(library: library, index: songIndex),
                                  events: events, outputs: outputs.list, application: lifecycle, memory: memory, logger: logger)
        self.partition = partition
        let loudnessStore = LoudnessStore(file: stateDirectory?.appendingPathComponent("loudness.json"))
        let loudness = LoudnessScans(store: loudnessStore, player: player, events: events, logger: logger)
        partition.gains.configure(configuration.loudness, measurements: loudnessStore)
        failures = PlaybackFailures(queue: queue, errors: partition, logger: logger)
        systemd = SystemdService(environment: configuration.environment)
        let stateKeeper = configuration.stateStore.map {
            StateKeeper(store: $0, queue: queue, playback: partition, application: lifecycle, outputs: outputs.list, logger: logger)
        }
        self.stateKeeper = stateKeeper
        let killed = DaemonPart(endingOnRequest: "kill")
        self.killed = killed
        let transfers = TransferCount()
        let statusLine = StatusLine.isWanted ? StatusLine(queue: queue, playback: partition, transfers: transfers) : nil
        self.statusLine = statusLine
        // The control socket's event loop (one thread); the feeds' HTTP client runs on it too.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let transferProgress = TransferProgressBoard()
        let downloads = DownloadsIntoLibrary(queue: queue, playQueue: partition, updater: updater, application: lifecycle, wake: lifecycle,
                                             autoEnqueue: configuration.autoEnqueue,
                                             musicDirectory: configuration.feeds.musicDirectory, loudness: loudness, logger: logger)
        let shown = TransfersShown(count: transfers, events: events, statusLine: statusLine, queue: queue)
        let feeds = FeedService(options: configuration.feeds, eventLoopGroup: group, stateDirectory: stateDirectory,
                                host: lifecycle, transferProgress: transferProgress, logger: logger,
                                downloaded: { downloads.downloaded($0, file: $1) }, deleted: { downloads.deleted($0) },
                                transfersChanged: { shown.changed(running: $0) })
        self.feeds = feeds
        let pace = configuration.pace
        partition.perform { [feeds] partition in partition.pace.configure(pace, feedRate: { feeds.rate(of: $0) }) }
        let webClients = configuration.web == nil ? nil : WebClients()
        let location = configuration.location.map {
            LocationService(options: $0, queue: queue, events: events, lifecycle: lifecycle,
                            announcements: RegionAnnouncements(queue: queue, announcer: partition), listener: webClients,
                            stateDirectory: stateDirectory, logger: logger)
        }
        self.location = location
        let instance = Instance(library: library, songIndex: songIndex, updater: updater,
                                storedPlaylists: StoredPlaylists(directory: playlistsHome.appendingPathComponent("playlists")),
                                remotePlaylists: RemotePlaylists(fetcher: feeds.http), stickers: stickers,
                                access: configuration.access, outputs: outputs.list, transfers: transfers,
                                messages: MessageChannels(queue: partitionQueue, events: events, remoteNotifications: feeds),
                                location: location, shutdown: KillPart(part: killed, logger: logger),
                                application: lifecycle, events: events, loudness: loudness)
        self.instance = instance
        let commands = CommandDispatcher(instance: instance, partition: partition, logger: logger)
        let runner = SessionRunner(executor: commands,
                                   scheduler: PartitionScheduler(queue: queue, gate: ExpensiveCommandGate(queue: queue)),
                                   remotePlaylists: instance.remotePlaylists, access: instance.access)
        let clientEnvironment = ClientEnvironment(runner: runner, events: events, playback: partition, queue: queue, stickers: stickers,
                                                  messages: instance.messages)
        server = ControlServer(group: group, environment: clientEnvironment,
                               clients: ClientLimit(maximum: configuration.maxClients, logger: logger),
                               timeout: configuration.connectionTimeout, logger: logger)
        if let options = configuration.web, let webClients {
            web = WebServer(options: options, environment: clientEnvironment, application: application, group: group,
                            clients: webClients, downloads: configuration.feeds.musicDirectory == nil ? nil : transferProgress,
                            location: location, logger: logger)
        } else {
            web = nil
        }
        self.configuration = configuration
        self.logger = logger
        zeroconf = configuration.zeroconfName == nil ? nil : AvahiPublisher(logger: logger)
    }

    /// Sets everything up and serves: the socket listens and the queue is loaded.
    private func start() async throws {
        if configuration.exitWhenFinished && configuration.files.isEmpty {
            logger.info("nothing to play")
            queueFinished.end()
            return
        }
        // The regions file, read here rather than before the group runs: SIGTERM during a long
        // read cancels it (a graceful shutdown cancels the read's task), and the daemon stops
        // cleanly without having started anything.
        let regions: [RegionWaypoint]
        do {
            regions = try await cancelWhenGracefulShutdown { [location] in try location?.readRegions() ?? [] }
        } catch is CancellationError {
            logger.info("stopped while reading the regions file")
            return
        }
        // Ahead of every client's command: the socket does not listen yet.
        await instance.stickers.open(configuration.stickerFile, createDirectory: configuration.createsStickerDirectory)
        observePlayer()
        await connectLifecycle(regions: regions)
        if configuration.handlesSignals { watchSignals() }
        // Clients' commands run on the partition's queue, so loading the queue there ahead of
        // them means no client sees it empty (a socket-activated daemon's first client is already
        // waiting). The queue is held (suspended) from before the socket listens until the load
        // is in front of every client's command; a daemon that cannot listen loads nothing (nor
        // saves over the saved queue), and the queue is let go for the parts' teardown.
        let listening = Atomic<Bool>(false)
        partitionQueue.suspend()
        partition.perform { [self] _ in
            if listening.load(ordering: .acquiring) { loadQueue() }
        }
        let sockets: [ListeningSockets.Socket]
        do {
            sockets = try await server.start(configuration.listeners, optional: configuration.optionalListeners)
        } catch {
            partitionQueue.resume()
            throw error
        }
        listening.store(true, ordering: .releasing)
        // Still held: the feeds are in place before any client's command runs (a push sent at
        // once finds them subscribed: their list is read on the feeds' queue ahead of it).
        let access = configuration.access
        feeds.start()
        partitionQueue.resume()
        await partition.run { _ in }
        for socket in sockets {
            logger.info("control socket: \(socket.description)")
        }
        publishZeroconf(sockets)
        if sockets.contains(where: { !$0.isLoopback }), access.restrictsRemoteClientsByDefault {
            logger.notice("clients from other machines may only read (no password is set): give --password SECRET@PERMISSIONS (and `password SECRET` in the client), or --default-permissions read,add,player,control,admin to trust the network")
        }
        systemd.didStart(player: player, partitionQueue: partition.queue, logger: logger)
    }

    /// Publishes `_mpd._tcp` on the first TCP listener's port (``ZeroconfService``), unless
    /// `--no-zeroconf` or there is none (a Unix socket only).
    private func publishZeroconf(_ sockets: [ListeningSockets.Socket]) {
        guard let zeroconf, let name = configuration.zeroconfName else { return }
        let listeners = sockets.compactMap { socket in socket.port.map { (port: $0, isLoopback: socket.isLoopback) } }
        guard let service = ZeroconfService(name: name, listeners: listeners) else { return }
        zeroconf.start(service)
    }

    /// Restores the saved queue, or queues the configured files. On the partition's queue.
    private func loadQueue() {
        let restored = !configuration.filesAreExplicit && (stateKeeper?.restore() ?? false)
        if !restored {
            partition.append(configuration.files)
            if !configuration.files.isEmpty { partition.startPlayback(at: 0) }
        }
        stateKeeper?.start(events: events)
        instance.updater.buildIfNeeded(in: lifecycle)
        statusLine?.follow(events)
        statusLine?.show()
    }

    /// With `--once`: ends the daemon if the player has nothing left. Checked after the
    /// partition's current command (`play N` empties the player for a moment; a failed item's
    /// successor is handed over there).
    private func endIfQueueFinished() {
        partition.perform { [self] _ in
            guard player.currentItem == nil && player.items().isEmpty else { return }
            logger.info("the queue has finished")
            // At once: no "Stopped" drawn while the parts stop.
            statusLine?.hide()
            queueFinished.end()
        }
    }

    private func observePlayer() {
        let logger = logger
        let failures = NotificationCenter.default.addObserver(
            forName: PlayerItem.failedToPlayToEndTimeNotification, object: nil, queue: nil
        ) { [self, failures] note in
            let error = note.userInfo?[PlayerItem.failedToPlayToEndTimeErrorKey].map { "\($0)" } ?? "unknown error"
            failures.failed((note.object as? PlayerItem).map { .init(url: $0.url) }, error: error)
            // An item that failed before it was heard never became the current item: with
            // `--once` a queue of nothing but such items has finished all the same.
            if configuration.exitWhenFinished {
                hasPlayed.store(true, ordering: .relaxed)
                endIfQueueFinished()
            }
        }
        let outputFailures = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidFailNotification, object: nil, queue: nil
        ) { _ in
            logger.warning("the audio output failed; retrying")
        }
        let playedToEnd = NotificationCenter.default.addObserver(
            forName: PlayerItem.didPlayToEndTimeNotification, object: nil, queue: nil
        ) { [feeds] note in
            if let item = note.object as? PlayerItem { feeds.playerDidPlayToEnd(item.url) }
        }
        let nowPlaying = player.observe(\.currentItem, options: [.initial, .new]) { [self] player, change in
            feeds.playerDidChangeItem(to: (change.newValue ?? nil)?.url)
            if let item = change.newValue ?? nil {
                hasPlayed.store(true, ordering: .relaxed)
                configuration.printLine("Now playing: \(item.url.lastPathComponent.isEmpty ? "Unknown" : item.url.lastPathComponent)")
            } else if configuration.exitWhenFinished && hasPlayed.load(ordering: .relaxed) {
                endIfQueueFinished()
            }
            events.post([.player])
        }
        let transport = player.observe(\.timeControlStatus, options: [.new]) { [events] _, _ in
            events.post([.player])
        }
        // The observer also reports the position once when playback pauses: only playing time is printed.
        // Its block runs on the clock thread: the writer never blocks it on a full stdout.
        let backgroundLines = BackgroundLineWriter { lost in
            DispatchQueue.global().async { logger.warning("stdout was not writable: \(lost) Background lines dropped") }
        }
        let ticks = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: timeQueue) { [lifecycle, player] time in
            if lifecycle.isInBackground && player.rate != 0 {
                backgroundLines.line(seconds: time.seconds)
            } else {
                backgroundLines.flushPending()
            }
        }
        // A new ICY title or name is a change of the song heard (mpd's idle `player`).
        let streams = StreamMetadataFollower(player: player) { [events, web, partition] item in
            events.post([.player])
            web?.streamChanged(item, playback: partition)
        }
        let chapters = Self.followChapters(player: player, partition: partition, events: events, web: web,
                                           configuration: configuration, logger: logger)
        defaultCenterObservers = [failures, outputFailures, playedToEnd]
        retained += [nowPlaying, transport, ticks, streams, chapters]
    }

    private func connectLifecycle(regions: [RegionWaypoint]) async {
        await partition.run { [lifecycle, location] _ in
            lifecycle.start()
            location?.start(regions: regions)
        }
        let application = lifecycle.application
        let center = application.notificationCenter
        // `status` shows the application's state: a kept one goes with every change of it.
        for name in [Application.willResignActiveNotification, Application.didEnterBackgroundNotification,
                     Application.willEnterForegroundNotification, Application.didBecomeActiveNotification,
                     Application.didSuspendNotification, Application.didWakeNotification] {
            retained.append(center.addObserver(forName: name, object: application, queue: nil) { [events] _ in
                events.statusSnapshot.invalidate()
            })
        }
        guard let statusLine else { return }
        retained.append(center.addObserver(forName: Application.willResignActiveNotification, object: application, queue: nil) { _ in
            statusLine.hide()
        })
        retained.append(center.addObserver(forName: Application.didBecomeActiveNotification, object: application, queue: nil) { _ in
            statusLine.show()
        })
    }

    /// SIGUSR1, SIGUSR2 and SIGHUP (the feeds file read again), in order, on the partition's
    /// queue. SIGTERM and SIGINT are the service group's (``run()``).
    private func watchSignals() {
        // Signals are handled on the partition's queue, where the application lives.
        let signals = SignalWatcher(queue: partitionQueue)
        signals.watch(SIGUSR1) { [lifecycle] in lifecycle.enterBackground() }
        signals.watch(SIGUSR2) { [lifecycle] in lifecycle.enterForeground() }
        signals.watch(SIGHUP) { [feeds] in feeds.reloadSubscriptions() }
        signals.start()
        retained.append(signals)
    }

    /// Starts the daemon and runs its parts until SIGTERM, SIGINT or the end of the queue
    /// (`--once`), then tears them down, last part first; returns once all are down (the daemon
    /// exits 0). Throws if the daemon cannot start (the control socket cannot listen).
    func run() async throws {
        let (player, partition, server, systemd, logger, decoders) = (player, partition, server, systemd, logger, decoders)
        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = []
        func part(_ service: DaemonPart, endsTheDaemon: Bool = false) {
            parts.append(.init(service: service, successTerminationBehavior: endsTheDaemon ? .gracefullyShutdownGroup : .cancelGroup,
                               failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // Closing waits for the device to play out what it holds (up to its buffer, half a second):
        // on a queue of its own, not on one of the few threads Swift's tasks run on.
        part(DaemonPart("player") {
            await withCheckedContinuation { (closed: CheckedContinuation<Void, Never>) in
                DispatchQueue(label: "queueplayerd.close").async {
                    player.close()
                    closed.resume()
                }
            }
            do { try await decoders.shutdown() } catch { logger.warning("the streams' HTTP client did not close cleanly: \(error)") }
        })
        if let stateKeeper {
            part(DaemonPart("state keeper") { await partition.run { _ in stateKeeper.saveBeforeExit() } })
        }
        part(DaemonPart("playback memory") { [memory] in
            await partition.run { $0.saveMemoryBeforeExit() }
            await memory.flush()
        })
        part(DaemonPart("control server", start: { [self] in try await start() }) {
            do { try await server.shutdown() } catch { logger.warning("the control socket did not close cleanly: \(error)") }
        })
        // Withdrawn before the listener closes: no client is sent to a port that is gone.
        if let zeroconf {
            part(DaemonPart("zeroconf") { await zeroconf.stop() })
        }
        // Stopped before the control server's event loop, which it runs on.
        if let web {
            parts.append(.init(service: web, successTerminationBehavior: .cancelGroup, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        // Before the control server's event loop goes: the HTTP client runs on it.
        part(DaemonPart("feeds") { [feeds] in await feeds.stop() })
        if let location {
            part(DaemonPart("location") { await location.stop() })
        }
        if let statusLine {
            part(DaemonPart("status line") { await partition.run { _ in statusLine.hide() } })
        }
        part(DaemonPart("systemd") {
            logger.info("stopping")
            await systemd.willStop()
        })
        if configuration.exitWhenFinished { part(queueFinished, endsTheDaemon: true) }
        part(killed, endsTheDaemon: true)
        var group = ServiceGroupConfiguration(services: parts, gracefulShutdownSignals: configuration.handlesSignals ? [.sigterm, .sigint] : [],
                                              logger: logger)
        // A part that hangs while stopping does not keep the daemon alive: after 10 s the group
        // cancels the parts, and 2 s later it ends the process (a `fatalError`, not status 0).
        group.maximumGracefulShutdownDuration = .seconds(10)
        group.maximumCancellationDuration = .seconds(2)
        defer {
            for observer in defaultCenterObservers { NotificationCenter.default.removeObserver(observer) }
        }
        try await ServiceGroup(configuration: group).run()
    }

    /// Stops the daemon as SIGTERM and a client's `kill` do (``run()`` then returns).
    func stop() {
        killed.end()
    }
}

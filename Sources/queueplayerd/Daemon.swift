import Dispatch
import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Synchronization

/// The composition root: a player, its observers, the control socket, and the
/// signals that steer it.
final class Daemon: @unchecked Sendable {
    private let player: QueuePlayer
    private let controller: PlaybackController
    private let events: ControlEvents
    private let server: ControlServer
    private let initialFiles: [URL]
    private let logger: Logger
    private let exitWhenFinished: Bool
    private let isInBackground = Atomic<Bool>(false)
    private let hasPlayed = Atomic<Bool>(false)
    private let timeQueue = DispatchQueue(label: "queueplayerd.time")
    private let signalQueue = DispatchQueue(label: "queueplayerd.signals")
    private let systemd = SystemdService()
    /// Observation tokens and sources kept alive for the daemon's lifetime (set once, in `start`).
    private var retained: [Any] = []

    init(urls: [URL], library: MusicLibrary, sink: any AudioSink, exitWhenFinished: Bool, logger: Logger) {
        player = QueuePlayer(sink: sink)
        let controllerQueue = DispatchQueue(label: "queueplayerd.controller")
        events = ControlEvents(queue: controllerQueue)
        let plugin = sink is ALSAAudioSink ? "alsa" : "null"
        controller = PlaybackController(queue: controllerQueue, player: player, library: library, events: events,
                                        output: (name: sink is ALSAAudioSink ? "ALSA (\(sink.name))" : "Null Output", plugin: plugin))
        server = ControlServer(controller: controller, events: events)
        initialFiles = urls
        self.logger = logger
        self.exitWhenFinished = exitWhenFinished
    }

    func start(socketPath: String) throws {
        observePlayer()
        watchSignals()
        let location = try server.start(path: socketPath)
        logger.info("control socket: \(location)")

        if exitWhenFinished && initialFiles.isEmpty {
            logger.info("nothing to play")
            exit(0)
        }
        controller.queue.sync {
            controller.append(initialFiles)
            if !initialFiles.isEmpty { controller.startPlayback(at: 0) }
        }
        systemd.didStart(player: player, controllerQueue: controller.queue, logger: logger)
    }

    private func observePlayer() {
        let logger = logger
        let failures = NotificationCenter.default.addObserver(
            forName: PlayerItem.failedToPlayToEndTimeNotification, object: nil, queue: nil
        ) { [controller] note in
            let error = note.userInfo?[PlayerItem.failedToPlayToEndTimeErrorKey].map { "\($0)" } ?? "unknown error"
            logger.error("cannot play: \(error)")
            controller.queue.async { controller.lastError = error }
        }
        let outputFailures = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidFailNotification, object: nil, queue: nil
        ) { _ in
            logger.warning("the audio output failed; retrying")
        }
        let nowPlaying = player.observe(\.currentItem, options: [.initial, .new]) { [self] player, change in
            if let item = change.newValue ?? nil {
                hasPlayed.store(true, ordering: .relaxed)
                Console.line("Now playing: \(item.url.lastPathComponent.isEmpty ? "Unknown" : item.url.lastPathComponent)")
            } else if exitWhenFinished && hasPlayed.load(ordering: .relaxed) {
                // Checked after the controller's current command: `play N` empties the player for a moment.
                controller.queue.async {
                    guard player.currentItem == nil && player.items().isEmpty else { return }
                    logger.info("the queue has finished")
                    player.close()
                    exit(0)
                }
            }
            events.post([.player])
        }
        let transport = player.observe(\.timeControlStatus, options: [.new]) { [events] _, _ in
            events.post([.player])
        }
        let ticks = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: timeQueue) { [self] time in
            if isInBackground.load(ordering: .relaxed) {
                Console.line(String(format: "Background: %.2f", time.seconds))
            }
        }
        retained += [failures, outputFailures, nowPlaying, transport, ticks]
    }

    private func watchSignals() {
        let logger = logger
        let signals = SignalWatcher(queue: signalQueue)
        signals.watch(SIGUSR1) { [self] in
            if !isInBackground.exchange(true, ordering: .relaxed) { logger.info("entered the background") }
        }
        signals.watch(SIGUSR2) { [self] in
            if isInBackground.exchange(false, ordering: .relaxed) { logger.info("entered the foreground") }
        }
        for stop in [SIGTERM, SIGINT] {
            signals.watch(stop) { [player, systemd] in
                logger.info("stopping")
                systemd.willStop()
                player.close()
                exit(0)
            }
        }
        retained.append(signals)
    }
}

import Dispatch
import Foundation
import Logging
import QueuePlayer
import Synchronization

/// The composition root: a player, its observers, and the signals that steer it.
final class Daemon: @unchecked Sendable {
    private let player: QueuePlayer
    private let logger: Logger
    private let exitWhenFinished: Bool
    private let isInBackground = Atomic<Bool>(false)
    private let timeQueue = DispatchQueue(label: "queueplayerd.time")
    private let signalQueue = DispatchQueue(label: "queueplayerd.signals")
    /// Observation tokens and sources kept alive for the daemon's lifetime (set once, in `start`).
    private var retained: [Any] = []

    init(urls: [URL], sink: any AudioSink, exitWhenFinished: Bool, logger: Logger) {
        self.player = QueuePlayer(items: urls.map(PlayerItem.init(url:)), sink: sink)
        self.logger = logger
        self.exitWhenFinished = exitWhenFinished
    }

    func start() {
        let logger = logger
        let failures = NotificationCenter.default.addObserver(
            forName: PlayerItem.failedToPlayToEndTimeNotification, object: nil, queue: nil
        ) { note in
            let error = note.userInfo?[PlayerItem.failedToPlayToEndTimeErrorKey].map { "\($0)" } ?? "unknown error"
            logger.error("cannot play: \(error)")
        }
        let outputFailures = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidFailNotification, object: nil, queue: nil
        ) { _ in
            logger.warning("the audio output failed; retrying")
        }
        let nowPlaying = player.observe(\.currentItem, options: [.initial, .new]) { [exitWhenFinished] player, change in
            if let item = change.newValue ?? nil {
                Console.line("Now playing: \(item.url.lastPathComponent.isEmpty ? "Unknown" : item.url.lastPathComponent)")
            } else if exitWhenFinished && player.items().isEmpty {
                logger.info("the queue has finished")
                player.close()
                exit(0)
            }
        }
        let ticks = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 100), queue: timeQueue) { [self] time in
            if isInBackground.load(ordering: .relaxed) {
                Console.line(String(format: "Background: %.2f", time.seconds))
            }
        }
        retained = [failures, outputFailures, nowPlaying, ticks]

        let signals = SignalWatcher(queue: signalQueue)
        signals.watch(SIGUSR1) { [self] in
            if !isInBackground.exchange(true, ordering: .relaxed) { logger.info("entered the background") }
        }
        signals.watch(SIGUSR2) { [self] in
            if isInBackground.exchange(false, ordering: .relaxed) { logger.info("entered the foreground") }
        }
        for stop in [SIGTERM, SIGINT] {
            signals.watch(stop) { [player] in
                logger.info("stopping")
                player.close()
                exit(0)
            }
        }
        retained.append(signals)

        if exitWhenFinished && player.items().isEmpty {
            logger.info("nothing to play")
            exit(0)
        }
        player.play()
    }
}

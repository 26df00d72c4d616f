import Dispatch
import Foundation
import Logging
import QueuePlayer
import Synchronization

/// The daemon as a `Type=notify` systemd service: `READY=1` once it serves, `STATUS=`
/// as the current item changes, `WATCHDOG=1` while it is alive, `STOPPING=1` when it stops.
///
/// Outside systemd (`$NOTIFY_SOCKET` unset) every method does nothing.
///
/// `@unchecked Sendable`: `lastStatus` belongs to `statusQueue`; `retained` and `watchdog`
/// are written once, by ``didStart(player:controllerQueue:logger:)`` on the thread that starts
/// the daemon, before any other use.
final class SystemdService: @unchecked Sendable {
    private let notifier: SystemdNotifier?
    private let watchdogPeriod: Double?
    private let statusQueue = DispatchQueue(label: "queueplayerd.systemd.status")
    /// The last `STATUS=` sent; touched only on `statusQueue`.
    private var lastStatus: String?
    /// Set once, in `didStart`: observation tokens and the watchdog.
    private var retained: [Any] = []
    private var watchdog: SystemdWatchdog?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        notifier = SystemdNotifier(environment: environment)
        watchdogPeriod = SystemdWatchdog.period(environment: environment)
    }

    /// Called once the control socket accepts and the queue is loaded: `READY=1`,
    /// then the status line follows the player and the watchdog starts.
    func didStart(player: QueuePlayer, controllerQueue: DispatchQueue, logger: Logger) {
        guard let notifier else { return }
        if !notifier.notify("READY=1") {
            logger.warning("cannot notify systemd at \(notifier.socketName): \(String(cString: strerror(errno)))")
        }
        let update: @Sendable (QueuePlayer) -> Void = { [self] player in
            let status = Self.status(of: player)
            statusQueue.async { [self] in
                guard status != lastStatus else { return }
                lastStatus = status
                notifier.notify("STATUS=\(status)")
            }
        }
        let item = player.observe(\.currentItem, options: [.initial]) { player, _ in update(player) }
        let transport = player.observe(\.timeControlStatus, options: []) { player, _ in update(player) }
        retained = [item, transport]
        if let watchdogPeriod {
            let watchdog = SystemdWatchdog(period: watchdogPeriod, notifier: notifier, player: player,
                                           controllerQueue: controllerQueue, logger: logger)
            watchdog.start()
            self.watchdog = watchdog
        }
    }

    /// Called when a stop has been asked for (SIGTERM, SIGINT), before the output drains.
    func willStop() {
        guard let notifier else { return }
        watchdog?.stop()
        statusQueue.sync {
            lastStatus = "Stopping"
            notifier.notify("STOPPING=1\nSTATUS=Stopping")
        }
    }

    /// `Playing <file>`, `Paused <file>`, `Waiting for the audio output: <file>` or `Stopped`.
    static func status(of player: QueuePlayer) -> String {
        guard let item = player.currentItem else { return "Stopped" }
        let name = item.url.lastPathComponent.isEmpty ? "Unknown" : item.url.lastPathComponent
        switch player.timeControlStatus {
        case .playing:
            return "Playing \(name)"
        case .waitingToPlayAtSpecifiedRate:
            return player.reasonForWaitingToPlay == .outputUnavailable ? "Waiting for the audio output: \(name)" : "Playing \(name)"
        case .paused:
            return "Paused \(name)"
        }
    }
}

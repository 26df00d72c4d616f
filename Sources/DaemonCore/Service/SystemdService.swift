import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging
import QueuePlayer
import Synchronization

/// The daemon as a `Type=notify` systemd service: `READY=1` once it serves, `STATUS=`
/// as the current item changes, `WATCHDOG=1` while it is alive, `STOPPING=1` when it stops.
///
/// Outside systemd (`$NOTIFY_SOCKET` unset) every method does nothing.
///
/// `@unchecked Sendable`: `lastStatus`, `retained` and `watchdog` belong to `statusQueue`,
/// which each use asserts.
package final class SystemdService: @unchecked Sendable {
    private let notifier: SystemdNotifier?
    private let watchdogPeriod: Double?
    private let statusQueue = DispatchQueue(label: "queueplayerd.systemd.status")
    /// The last `STATUS=` sent; touched only on `statusQueue`.
    private var lastStatus: String?
    /// Set once, in `didStart`, on `statusQueue`: observation tokens and the watchdog.
    private var retained: [Any] = []
    private var watchdog: SystemdWatchdog?

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        notifier = SystemdNotifier(environment: environment)
        watchdogPeriod = SystemdWatchdog.period(environment: environment)
    }

    /// Called once the control socket accepts and the queue is loaded: `READY=1`,
    /// then the status line follows the player and the watchdog starts.
    package func didStart(player: QueuePlayer, partitionQueue: PartitionQueue, logger: Logger) {
        guard let notifier else { return }
        if !notifier.notify("READY=1") {
            logger.warning("cannot notify systemd at \(notifier.socketName): \(String(cString: strerror(errno)))")
        }
        let update: @Sendable (QueuePlayer) -> Void = { [self] player in
            let status = Self.status(of: player)
            statusQueue.async { [self] in
                dispatchPrecondition(condition: .onQueue(statusQueue))
                guard status != lastStatus else { return }
                lastStatus = status
                notifier.notify("STATUS=\(status)")
            }
        }
        let item = player.observe(\.currentItem, options: [.initial]) { player, _ in update(player) }
        let transport = player.observe(\.timeControlStatus, options: []) { player, _ in update(player) }
        let watchdog = watchdogPeriod.map {
            SystemdWatchdog(period: $0, notifier: notifier, player: player, partitionQueue: partitionQueue, logger: logger)
        }
        watchdog?.start()
        statusQueue.async { [self] in
            retained = [item, transport]
            self.watchdog = watchdog
        }
    }

    /// Called when a stop has been asked for (SIGTERM, SIGINT), before the output drains;
    /// returns once systemd has been told.
    package func willStop() async {
        guard let notifier else { return }
        await withCheckedContinuation { (told: CheckedContinuation<Void, Never>) in
            statusQueue.async { [self] in
                dispatchPrecondition(condition: .onQueue(statusQueue))
                watchdog?.stop()
                lastStatus = "Stopping"
                notifier.notify("STOPPING=1\nSTATUS=Stopping")
                told.resume()
            }
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

import Dispatch
import Foundation
import Logging
import QueuePlayer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The service watchdog (`WatchdogSec=`): `WATCHDOG=1` every half of `$WATCHDOG_USEC`,
/// but only while the daemon is alive inside.
///
/// Each period, in two steps on its own queue and never waiting: first it sends its probes,
/// then, three quarters of a period later, it reads what they found and pings only if
/// - the partition's queue (the control socket's commands) ran the probe's block;
/// - the player's control queue answered `currentTime()`;
/// - while the player is playing, the audible time moved: if it stands still for a whole
///   period (at least a second), the render thread or the output is taken to be hung. Not
///   while the output has failed and the player retries it (`outputDidFailNotification`,
///   until the time moves again), nor on an item held at its end.
///
/// A check that fails withholds the ping; systemd then kills and restarts the service.
/// A probe that never returns is not sent again, so nothing piles up behind a hang.
///
/// `@unchecked Sendable`: the checker's state (`checks`) belongs to `queue`, which every
/// method that touches it asserts; the rest is `let`s and atomics.
final class SystemdWatchdog: @unchecked Sendable {
    /// The ping period from `$WATCHDOG_USEC` (half of it), when the watchdog is meant for
    /// this process (`$WATCHDOG_PID` unset or ours).
    static func period(environment: [String: String] = ProcessInfo.processInfo.environment) -> Double? {
        guard let microseconds = environment["WATCHDOG_USEC"].flatMap(UInt64.init), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty, pid_t(pid) != getpid() { return nil }
        return Double(microseconds) / 2e6
    }

    private struct Sample: Sendable, Equatable {
        var item: ObjectIdentifier?
        var seconds: Double
        var isPlaying: Bool
        var isAtEnd: Bool
    }

    /// What the checker remembers from one period to the next; on ``queue``.
    private struct Checks {
        var lastProgress = 0.0
        var previous: Sample?
        var wasHealthy = true
        var timer: (any DispatchSourceTimer)?
    }

    private let period: Double
    /// How long the audible time may stand still while playing.
    private let stallLimit: Double
    private let notifier: SystemdNotifier
    private let player: QueuePlayer
    /// The partition's queue, which must answer a probe every period.
    private let partitionQueue: PartitionQueue
    private let probeQueue = DispatchQueue(label: "queueplayerd.watchdog.probe")
    private let logger: Logger
    /// The watchdog's own queue: its timer and ``Checks``.
    private let queue = DispatchQueue(label: "queueplayerd.watchdog")
    private var checks = Checks()
    private let partitionProbeOutstanding = Atomic<Bool>(false)
    private let playerProbeOutstanding = Atomic<Bool>(false)
    /// The last answer of the player's probe, and whether it came since the probes were sent.
    private let playerAnswer = Mutex<Sample?>(nil)
    private let partitionAnswered = Atomic<Bool>(false)
    /// The output failed and the player retries it: the audible time may stand still.
    private let outputFailing = Atomic<Bool>(false)

    init(period: Double, notifier: SystemdNotifier, player: QueuePlayer, partitionQueue: PartitionQueue, logger: Logger) {
        self.period = period
        self.stallLimit = max(period * 0.9, 1.0)
        self.notifier = notifier
        self.player = player
        self.partitionQueue = partitionQueue
        self.logger = logger
    }

    /// Starts pinging, a period from now.
    func start() {
        // Registered for the daemon's lifetime, as the watchdog is.
        _ = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidFailNotification, object: player, queue: nil
        ) { [self] _ in
            outputFailing.store(true, ordering: .relaxed)
        }
        queue.async { [self] in
            guard checks.timer == nil else { return }
            logger.debug("watchdog: WATCHDOG=1 every \(period) s")
            checks.lastProgress = monotonicNow()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [self] in sendProbes() }
            timer.schedule(deadline: .now(), repeating: period, leeway: .milliseconds(10))
            checks.timer = timer
            timer.resume()
        }
    }

    /// Stops pinging.
    func stop() {
        queue.async { [self] in
            checks.timer?.cancel()
            checks.timer = nil
        }
    }

    // MARK: - Private

    /// The first step of a period: the probes go out; the check follows when they have had
    /// three quarters of a period to answer.
    private func sendProbes() {
        dispatchPrecondition(condition: .onQueue(queue))
        partitionAnswered.store(false, ordering: .relaxed)
        playerAnswer.withLock { $0 = nil }
        if !partitionProbeOutstanding.exchange(true, ordering: .acquiringAndReleasing) {
            partitionQueue.async { [self] in
                partitionProbeOutstanding.store(false, ordering: .releasing)
                partitionAnswered.store(true, ordering: .releasing)
            }
        }
        if !playerProbeOutstanding.exchange(true, ordering: .acquiringAndReleasing) {
            probeQueue.async { [self] in
                let before = player.timeControlStatus
                let item = player.currentItem
                let seconds = player.currentTime().seconds
                let isPlaying = before == .playing && player.timeControlStatus == .playing && player.currentItem === item
                let isAtEnd = item?.duration.map { seconds >= $0.seconds - 0.001 } ?? false
                playerAnswer.withLock {
                    $0 = Sample(item: item.map(ObjectIdentifier.init), seconds: seconds, isPlaying: isPlaying, isAtEnd: isAtEnd)
                }
                playerProbeOutstanding.store(false, ordering: .releasing)
            }
        }
        queue.asyncAfter(deadline: .now() + period * 0.75) { [self] in
            guard checks.timer != nil else { return }
            check()
        }
    }

    /// The second step: what the probes found, and the ping if all is well.
    private func check() {
        dispatchPrecondition(condition: .onQueue(queue))
        var problem: String?
        if !partitionAnswered.load(ordering: .acquiring) {
            problem = "the partition's queue does not answer"
        }
        if let sample = playerAnswer.withLock({ $0 }) {
            let now = monotonicNow()
            if let previous = checks.previous, sample.isPlaying, previous.isPlaying, previous.item == sample.item,
               previous.seconds == sample.seconds, !sample.isAtEnd, !outputFailing.load(ordering: .relaxed) {
                if now - checks.lastProgress >= stallLimit {
                    problem = problem ?? "playing, but the audible time has stood at \(String(format: "%.2f", sample.seconds)) s for \(String(format: "%.1f", now - checks.lastProgress)) s"
                }
            } else {
                checks.lastProgress = now
                if let previous = checks.previous, sample.item == previous.item, sample.seconds != previous.seconds {
                    outputFailing.store(false, ordering: .relaxed)
                }
            }
            checks.previous = sample
        } else {
            problem = problem ?? "the player's control queue does not answer"
        }

        if let problem {
            if checks.wasHealthy { logger.error("watchdog: \(problem); withholding WATCHDOG=1") }
            checks.wasHealthy = false
        } else {
            if !checks.wasHealthy { logger.notice("watchdog: the daemon answers again") }
            checks.wasHealthy = true
            notifier.notify("WATCHDOG=1")
        }
    }

    private func monotonicNow() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

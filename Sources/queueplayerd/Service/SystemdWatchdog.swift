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
/// Before each ping its own thread checks, never waiting longer than part of a period:
/// - the controller's queue (the control socket's commands) runs a block;
/// - the player's control queue answers `currentTime()`;
/// - while the player is playing, the audible time moves: if it stands still for a
///   whole period (at least a second), the render thread or the output is taken to be hung.
///   Not while the output has failed and the player retries it (`outputDidFailNotification`,
///   until the time moves again), nor on an item held at its end.
///
/// A check that fails withholds the ping; systemd then kills and restarts the service.
/// A probe that never returns is not sent again, so nothing piles up behind a hang.
final class SystemdWatchdog: Sendable {
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

    private let period: Double
    /// How long the audible time may stand still while playing.
    private let stallLimit: Double
    private let notifier: SystemdNotifier
    private let player: QueuePlayer
    private let controllerQueue: DispatchQueue
    private let probeQueue = DispatchQueue(label: "queueplayerd.watchdog.probe")
    private let logger: Logger
    private let isRunning = Atomic<Bool>(false)
    private let controllerProbeOutstanding = Atomic<Bool>(false)
    private let playerProbeOutstanding = Atomic<Bool>(false)
    /// The output failed and the player retries it: the audible time may stand still.
    private let outputFailing = Atomic<Bool>(false)

    init(period: Double, notifier: SystemdNotifier, player: QueuePlayer, controllerQueue: DispatchQueue, logger: Logger) {
        self.period = period
        self.stallLimit = max(period * 0.9, 1.0)
        self.notifier = notifier
        self.player = player
        self.controllerQueue = controllerQueue
        self.logger = logger
    }

    /// Starts pinging on a thread of its own.
    func start() {
        guard !isRunning.exchange(true, ordering: .relaxed) else { return }
        // Registered for the daemon's lifetime, as the watchdog is.
        _ = NotificationCenter.default.addObserver(
            forName: QueuePlayer.outputDidFailNotification, object: player, queue: nil
        ) { [self] _ in
            outputFailing.store(true, ordering: .relaxed)
        }
        let thread = Thread { [self] in
            setKernelThreadName("qpd.watchdog")
            run()
        }
        thread.name = "queueplayerd.watchdog"
        thread.start()
    }

    /// Stops pinging (at the latest one period later).
    func stop() {
        isRunning.store(false, ordering: .relaxed)
    }

    // MARK: - Private

    private func run() {
        logger.debug("watchdog: WATCHDOG=1 every \(period) s")
        var tick = monotonicNow()
        var lastProgress = tick
        var previous: Sample?
        var wasHealthy = true
        while isRunning.load(ordering: .relaxed) {
            let deadline = tick + period * 0.75
            var problem: String?
            if !probeController(until: deadline) {
                problem = "the control queue does not answer"
            }
            if let sample = probePlayer(until: deadline) {
                let now = monotonicNow()
                if let previous, sample.isPlaying, previous.isPlaying, previous.item == sample.item,
                   previous.seconds == sample.seconds, !sample.isAtEnd, !outputFailing.load(ordering: .relaxed) {
                    if now - lastProgress >= stallLimit {
                        problem = problem ?? "playing, but the audible time has stood at \(String(format: "%.2f", sample.seconds)) s for \(String(format: "%.1f", now - lastProgress)) s"
                    }
                } else {
                    lastProgress = now
                    if let previous, sample.item == previous.item, sample.seconds != previous.seconds {
                        outputFailing.store(false, ordering: .relaxed)
                    }
                }
                previous = sample
            } else {
                problem = problem ?? "the player's control queue does not answer"
            }

            if let problem {
                if wasHealthy { logger.error("watchdog: \(problem); withholding WATCHDOG=1") }
                wasHealthy = false
            } else {
                if !wasHealthy { logger.notice("watchdog: the daemon answers again") }
                wasHealthy = true
                notifier.notify("WATCHDOG=1")
            }

            tick += period
            let now = monotonicNow()
            if tick < now { tick = now }  // after a long stall, do not try to catch up
            sleep(until: tick)
        }
    }

    /// True if the controller's queue ran a block before `deadline`.
    private func probeController(until deadline: Double) -> Bool {
        guard !controllerProbeOutstanding.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let answered = DispatchSemaphore(value: 0)
        controllerQueue.async { [self] in
            controllerProbeOutstanding.store(false, ordering: .releasing)
            answered.signal()
        }
        return answered.wait(timeout: dispatchTime(deadline)) == .success
    }

    /// The player's state, if its control queue answered before `deadline`.
    private func probePlayer(until deadline: Double) -> Sample? {
        guard !playerProbeOutstanding.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
        let answered = DispatchSemaphore(value: 0)
        let result = Mutex<Sample?>(nil)
        probeQueue.async { [self] in
            let before = player.timeControlStatus
            let item = player.currentItem
            let seconds = player.currentTime().seconds
            let isPlaying = before == .playing && player.timeControlStatus == .playing && player.currentItem === item
            let isAtEnd = item?.duration.map { seconds >= $0.seconds - 0.001 } ?? false
            result.withLock {
                $0 = Sample(item: item.map(ObjectIdentifier.init), seconds: seconds, isPlaying: isPlaying, isAtEnd: isAtEnd)
            }
            playerProbeOutstanding.store(false, ordering: .releasing)
            answered.signal()
        }
        guard answered.wait(timeout: dispatchTime(deadline)) == .success else { return nil }
        return result.withLock { $0 }
    }

    private func monotonicNow() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    private func dispatchTime(_ seconds: Double) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: UInt64(max(0, seconds) * 1e9))
    }

    private func sleep(until time: Double) {
        let remaining = time - monotonicNow()
        if remaining > 0 { usleep(useconds_t(min(remaining, 3600) * 1e6)) }
    }
}

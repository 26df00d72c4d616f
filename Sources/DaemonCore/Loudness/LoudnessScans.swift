import Dispatch
import Foundation
import Logging
import Loudness
import MPDProtocol
import QueuePlayer
import Synchronization

/// Loudness measurements as background work: each file is decoded and measured
/// (``LoudnessScanner``) on a serial utility queue of its own, never on an event loop or the
/// partition's queue, one after another; the result goes into the ``LoudnessStore``, the
/// player chooses its items' gains again, and idle `loudness` tells the clients.
///
/// Each measurement runs inside a background task begun by whoever asked (a downloaded
/// episode's wake, a command's activity), so a backgrounded daemon is not suspended under it;
/// when the task expires, the measurement stops within one chunk and nothing is kept.
/// `Sendable`: its state is the job counter (an atomic) and `let`s.
final class LoudnessScans: Sendable {
    let store: LoudnessStore
    private let player: QueuePlayer
    private let events: ControlEvents
    private let logger: Logger
    private let queue = DispatchQueue(label: "queueplayerd.loudness", qos: .utility)
    private let jobs = Atomic<Int>(0)

    init(store: LoudnessStore, player: QueuePlayer, events: ControlEvents, logger: Logger) {
        self.store = store
        self.player = player
        self.events = events
        self.logger = logger
    }

    /// Measures `file` inside `activity` (which it ends); returns the job's number at once.
    @discardableResult
    func measure(_ file: URL, inside activity: BackgroundActivity, then done: (@Sendable () -> Void)? = nil) -> Int {
        let job = jobs.add(1, ordering: .relaxed).newValue
        queue.async { [self] in
            defer {
                activity.end()
                done?()
            }
            let started = DispatchTime.now().uptimeNanoseconds
            do throws(LoudnessScanner.Failure) {
                let measurement = try LoudnessScanner.measure(file, cancelled: { activity.isExpired })
                store.remember(measurement, of: file)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                logger.info("loudness: \(file.lastPathComponent): \(Self.text(measurement.integrated)) LUFS, true peak \(Self.text(measurement.truePeak)) dBTP (\(Self.text(seconds)) s)")
                player.updateGains()
            } catch .cancelled {
                logger.notice("loudness: \(file.lastPathComponent): stopped, the background time ran out")
            } catch {
                logger.warning("loudness: \(file.lastPathComponent) cannot be measured: \(error)")
            }
            events.post([.loudness])
        }
        return job
    }

    /// Waits until every measurement asked before has finished (tests, shutdown).
    func waitUntilIdle() { queue.sync {} }

    static func text(_ value: Double) -> String { String(format: "%.2f", value) }
}

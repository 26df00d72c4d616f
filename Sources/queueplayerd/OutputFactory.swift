import ArgumentParser
import Foundation
import Logging
import QueuePlayer

/// Turns `--output` into an audio sink, and says in the log what becomes of it.
enum OutputFactory {
    /// Logs the output's recoveries for the daemon's lifetime: it coming back after it failed
    /// (the failure itself is logged where the daemon observes the player), and underruns
    /// (the player was starved: a stopped process, a saturated machine, a stalled sound
    /// server) with their running total, so a storm of them is visible in the journal.
    private static func logRecoveries(logger: Logger) {
        _ = NotificationCenter.default.addObserver(forName: QueuePlayer.outputDidRecoverNotification, object: nil, queue: nil) { _ in
            logger.notice("the audio output is back; playing on")
        }
        _ = NotificationCenter.default.addObserver(forName: QueuePlayer.outputDidRecoverFromUnderrunsNotification, object: nil, queue: nil) { note in
            let count = note.userInfo?[QueuePlayer.underrunCountKey] as? Int ?? 0
            logger.warning("the audio output ran dry and was restarted: recovered from \(count) underrun\(count == 1 ? "" : "s") so far")
        }
    }

    /// The sink for `choice`; its recoveries are logged from then on (called once per daemon).
    static func makeSink(for choice: OutputChoice, logger: Logger) throws -> any AudioSink {
        logRecoveries(logger: logger)
        switch choice {
        case .null:
            logger.info("output: null (real-time, audio discarded)")
            return NullAudioSink()
        case .alsa(let device):
            if case .failure(let error) = ALSAAudioSink.probe(device: device) {
                throw ValidationError("--output alsa:\(device): \(error.reason)")
            }
            logger.info("output: ALSA device \(device)")
            return ALSAAudioSink(device: device)
        case .auto:
            switch ALSAAudioSink.probe(device: "default") {
            case .success:
                logger.info("output: ALSA device default")
                return ALSAAudioSink(device: "default")
            case .failure(let error):
                logger.warning("output: ALSA's default device cannot be opened (\(error.reason)); playing to a real-time null output instead (decided at start; --output alsa requires the device)")
                return NullAudioSink()
            }
        }
    }
}

import ArgumentParser
import Logging
import QueuePlayer

/// Turns `--output` into an audio sink.
enum OutputFactory {
    static func makeSink(for choice: OutputChoice, logger: Logger) throws -> any AudioSink {
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
                logger.warning("output: ALSA's default device cannot be opened (\(error.reason)); playing to a real-time null output instead")
                return NullAudioSink()
            }
        }
    }
}

import Foundation
import Logging
import QueuePlayer

/// Turns `--output` into an audio sink, and says in the log what becomes of it.
package enum OutputFactory {
    /// What the daemon plays to: the player's sink, what `outputs` lists, and the one format
    /// items decode to (a FIFO's), if any.
    package struct Outputs {
        package var sink: any AudioSink
        package var list: AudioOutputs
        package var decodeFormat: AudioFormat?
    }

    /// The outputs for `choices` (`auto` if none): one sink, or several behind a
    /// ``MultiOutputSink``; ALSA devices get a buffer of `bufferTimeMicroseconds`. Their
    /// recoveries are logged from then on (called once per daemon).
    package static func makeOutputs(for choices: [OutputChoice], bufferTimeMicroseconds: UInt32, logger: Logger) throws -> Outputs {
        let choices = choices.isEmpty ? [.auto] : choices
        let decodeFormat = try fifoFormat(of: choices)
        for (index, choice) in choices.enumerated() where choices[..<index].contains(choice) {
            throw DaemonOptionError("--output \(choice) is given twice.")
        }
        logRecoveries(logger: logger)
        var sinks: [any AudioSink] = []
        var descriptions: [AudioOutputs.Output] = []
        for choice in choices {
            let sink = try makeSink(for: choice, bufferTimeMicroseconds: bufferTimeMicroseconds, logger: logger)
            sinks.append(sink)
            descriptions.append(describe(sink))
        }
        if sinks.count == 1 {
            return Outputs(sink: sinks[0], list: AudioOutputs(outputs: descriptions, switch: nil), decodeFormat: decodeFormat)
        }
        let multiple = MultiOutputSink(outputs: sinks, enabled: sinks.map { _ in true })
        return Outputs(sink: multiple, list: AudioOutputs(outputs: descriptions, switch: multiple), decodeFormat: decodeFormat)
    }

    /// The format of the FIFO outputs (all must agree: items are decoded to it once for every
    /// output), checked against what libmpg123 can decode to.
    private static func fifoFormat(of choices: [OutputChoice]) throws -> AudioFormat? {
        var found: OutputChoice.FIFOFormat?
        for case let .fifo(path, format) in choices {
            guard format.bits == 16 else {
                throw DaemonOptionError("--output fifo:\(path): the format \(format) has \(format.bits) bits; FIFO outputs write 16-bit samples (RATE:16:CHANNELS).")
            }
            let audio = AudioFormat(sampleRate: format.sampleRate, channelCount: format.channels)
            guard MPG123Decoder.canDecode(to: audio) else {
                throw DaemonOptionError("--output fifo:\(path): cannot decode to \(format): the rate must be an MPEG rate (8000 to 48000, such as 44100 or 48000) and 1 or 2 channels.")
            }
            if let found, found != format {
                throw DaemonOptionError("--output fifo:\(path): every FIFO output must have the same format (\(found) and \(format)).")
            }
            found = format
        }
        return found.map { AudioFormat(sampleRate: $0.sampleRate, channelCount: $0.channels) }
    }

    /// The name and plugin `outputs` shows for `sink`.
    private static func describe(_ sink: any AudioSink) -> AudioOutputs.Output {
        switch sink {
        case let alsa as ALSAAudioSink: return .init(name: "ALSA (\(alsa.name))", plugin: "alsa")
        case let fifo as FIFOAudioSink: return .init(name: "FIFO (\(fifo.path))", plugin: "fifo")
        default: return .init(name: "Null Output", plugin: "null")
        }
    }

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

    /// The sink for `choice`.
    private static func makeSink(for choice: OutputChoice, bufferTimeMicroseconds: UInt32, logger: Logger) throws -> any AudioSink {
        let buffer = "buffer \(bufferTimeMicroseconds / 1000) ms"
        switch choice {
        case .fifo(let path, let format):
            do {
                try FIFOAudioSink.prepare(path: path)
            } catch {
                // Nothing there, in a directory that exists, but not creatable by the daemon (a
                // sandbox's read-only /tmp): the reader (snapserver's `mode=create`) may make it.
                let directory = (path as NSString).deletingLastPathComponent
                var isDirectory: ObjCBool = false
                guard !FileManager.default.fileExists(atPath: path),
                      FileManager.default.fileExists(atPath: directory.isEmpty ? "." : directory, isDirectory: &isDirectory),
                      isDirectory.boolValue else {
                    throw DaemonOptionError("--output fifo:\(path): \(error.reason)")
                }
                logger.warning("output fifo:\(path): \(error.reason); the audio is dropped until the FIFO exists (a reader such as snapserver may create it)")
            }
            logger.info("output: FIFO \(path), \(format) (real-time; audio dropped while no one reads)")
            return FIFOAudioSink(path: path, format: AudioFormat(sampleRate: format.sampleRate, channelCount: format.channels))
        case .null:
            logger.info("output: null (real-time, audio discarded)")
            return NullAudioSink()
        case .alsa(let device):
            // Opened once: the sink keeps the device it checked for its first stream.
            switch ALSAAudioSink.open(device: device, bufferTimeMicroseconds: bufferTimeMicroseconds) {
            case .success(let sink):
                logger.info("output: ALSA device \(device), \(buffer)")
                return sink
            case .failure(let error):
                throw DaemonOptionError("--output alsa:\(device): \(error.reason)")
            }
        case .auto:
            switch ALSAAudioSink.open(device: "default", bufferTimeMicroseconds: bufferTimeMicroseconds) {
            case .success(let sink):
                logger.info("output: ALSA device default, \(buffer)")
                return sink
            case .failure(let error):
                logger.warning("output: ALSA's default device cannot be opened (\(error.reason)); playing to a real-time null output instead (decided at start; --output alsa requires the device)")
                return NullAudioSink()
            }
        }
    }
}

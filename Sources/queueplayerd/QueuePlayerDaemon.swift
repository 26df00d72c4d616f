import ArgumentParser
import Dispatch
import Foundation
import Logging
import QueuePlayer
import Synchronization

/// `queueplayerd`: plays a queue of MP3 files through ALSA, like an iOS app with
/// the audio background mode.
@main
struct QueuePlayerDaemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queueplayerd",
        abstract: "A headless, gapless MP3 queue player for ALSA.",
        discussion: """
            Queues the given MP3 files (or the .mp3 files of --media, sorted by name) and plays them \
            without gaps. Each new item is logged as "Now playing: <file name>".

            SIGUSR1 sends the player to the background, where it prints "Background: <seconds>" \
            every 10 ms while playing; SIGUSR2 brings it back to the foreground. SIGTERM or SIGINT stop it.
            """)

    @Option(name: .long, help: ArgumentHelp("A directory whose .mp3 files are queued, sorted by name.", valueName: "DIR"))
    var media: String?

    @Option(name: .long, help: ArgumentHelp("Where audio goes: auto, alsa, alsa:DEVICE or null.", valueName: "OUTPUT"))
    var output: OutputChoice = .auto

    @Flag(name: .long, help: "Exit (status 0) once the queue has finished playing.")
    var once = false

    @Argument(help: ArgumentHelp("MP3 files to queue, in order.", valueName: "FILE"))
    var files: [String] = []

    func validate() throws {
        if media != nil && !files.isEmpty {
            throw ValidationError("Give either --media DIR or FILE arguments, not both.")
        }
        if let media {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: media, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--media \(media): no such directory.")
            }
        }
    }

    func run() throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["QUEUEPLAYERD_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
        let logger = Logger(label: "queueplayerd")
        let urls: [URL]
        if let media {
            do {
                urls = try MediaLibrary.files(in: URL(fileURLWithPath: media))
            } catch {
                throw ValidationError("--media \(media): \(error.localizedDescription)")
            }
        } else {
            urls = files.map { URL(fileURLWithPath: $0) }
        }
        let sink = try OutputFactory.makeSink(for: output, logger: logger)
        let daemon = Daemon(urls: urls, sink: sink, exitWhenFinished: once, logger: logger)
        daemon.start()
        dispatchMain()
    }
}

extension OutputChoice {
    static var defaultValueDescription: String { "auto" }
}

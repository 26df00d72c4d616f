import FeedFetch
import Foundation
import Logging
import QueuePlayer

extension Daemon {
    /// `--buffer-time`'s default and range, in milliseconds (the ALSA sink's, which are in microseconds).
    public static let defaultBufferTimeMilliseconds = Int(ALSAAudioSink.defaultBufferTimeMicroseconds / 1000)
    public static let bufferTimesMilliseconds = Int(ALSAAudioSink.bufferTimeRange.lowerBound / 1000)...Int(ALSAAudioSink.bufferTimeRange.upperBound / 1000)

    /// The control socket's default path: `$XDG_RUNTIME_DIR/queueplayerd.sock`, or a private
    /// per-user directory under /tmp when the variable is unset.
    public static func defaultSocketPath() -> String { ControlServer.defaultPath() }

    /// Installs the daemon's log handler (standard error, or the journal's levels under
    /// systemd; `QUEUEPLAYERD_LOG_LEVEL` sets the level). Once per process, before ``run(options:)``.
    public static func bootstrapLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StandardErrorLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["QUEUEPLAYERD_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            return handler
        }
    }

    /// Builds the daemon that `options` describe and runs it until SIGTERM, SIGINT or (with
    /// `--once`) the end of the queue. Throws ``DaemonOptionError`` for an option the daemon
    /// cannot use, or the reason the daemon could not start.
    public static func run(options: DaemonOptions) async throws {
        let logger = Logger(label: "queueplayerd")
        let urls: [URL]
        if let media = options.media {
            do {
                urls = try MusicLibrary.topLevelFiles(in: URL(fileURLWithPath: media))
            } catch {
                throw DaemonOptionError("--media \(media): \(error.localizedDescription)")
            }
        } else {
            urls = options.files.map { URL(fileURLWithPath: $0) }
        }
        let libraryRoot = options.media ?? options.musicDirectory ?? options.files.first.map { ($0 as NSString).deletingLastPathComponent }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Music").path
        let root = URL(fileURLWithPath: libraryRoot.isEmpty ? "." : libraryRoot)
        let outputs = try OutputFactory.makeOutputs(for: options.outputs,
                                                    bufferTimeMicroseconds: UInt32(options.bufferTimeMilliseconds) * 1000,
                                                    logger: logger)
        var configuration = Configuration(
            // `--media DIR` asks to play DIR as FILE arguments ask to play them: either replaces a saved queue.
            files: urls, filesAreExplicit: options.media != nil || !options.files.isEmpty, exitWhenFinished: options.once,
            backgroundMode: options.backgroundMode, backgroundTime: options.backgroundTime,
            stateStore: options.once || options.noState ? nil : StateStore(file: StateStore.defaultFile()),
            feeds: FeedService.Options(feeds: options.feeds, file: FeedSubscriptionList.defaultFile(),
                                       interval: options.fetchInterval, timeout: options.fetchTimeout,
                                       musicDirectory: root,
                                       maximumDownloadSize: options.maxDownloadSize, downloadLimit: options.downloadLimit,
                                       minimumFreeSpace: options.minFreeSpace),
            autoEnqueue: options.autoEnqueue)
        configuration.location = try locationOptions(options, logger: logger)
        let daemon = Daemon(configuration: configuration, library: MusicLibrary(root: root), outputs: outputs, logger: logger)
        try await daemon.run(socketPath: options.socket ?? defaultSocketPath())
    }

    /// `--location`, `location` in `--background-modes` and `--regions`; nil without `--location`.
    /// A waypoint that is wrong is left out with a warning naming it; a file that cannot be read is an option error.
    private static func locationOptions(_ options: DaemonOptions, logger: Logger) throws -> LocationService.Options? {
        guard let source = options.location else { return nil }
        var waypoints: [RegionWaypoint] = []
        if let path = options.regions {
            let read: (waypoints: [RegionWaypoint], problems: [String])
            do {
                read = try RegionFile.read(URL(fileURLWithPath: path))
            } catch {
                throw DaemonOptionError("--regions \(path): \(error.localizedDescription)")
            }
            for problem in read.problems { logger.warning("--regions \(path): \(problem)") }
            waypoints = read.waypoints
        }
        return LocationService.Options(source: source, backgroundUpdates: options.backgroundLocation, regions: waypoints)
    }
}

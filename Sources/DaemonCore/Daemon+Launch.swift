import FeedFetch
import Foundation
import HTTPStreaming
import MPDProtocol
import NIOCore
#if canImport(Glibc)
import Glibc
#endif
import Logging
import QueuePlayer
import Zeroconf

extension Daemon {
    /// `--buffer-time`'s default and range, in milliseconds (the ALSA sink's, which are in microseconds).
    public static let defaultBufferTimeMilliseconds = Int(ALSAAudioSink.defaultBufferTimeMicroseconds / 1000)
    public static let bufferTimesMilliseconds = Int(ALSAAudioSink.bufferTimeRange.lowerBound / 1000)...Int(ALSAAudioSink.bufferTimeRange.upperBound / 1000)

    /// The control socket's default path: `$XDG_RUNTIME_DIR/queueplayerd.sock`, or a private
    /// per-user directory under /tmp when the variable is unset.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        ControlServer.defaultPath(environment: environment)
    }

    /// Installs the daemon's log handler (standard error, or the journal's levels under
    /// systemd; `QUEUEPLAYERD_LOG_LEVEL` sets the level). Once per process, before ``run(options:environment:)``.
    public static func bootstrapLogging(environment: [String: String] = ProcessInfo.processInfo.environment) {
        LoggingSystem.bootstrap(StandardErrorLogHandler.factory(environment: environment))
    }

    /// Builds the daemon that `options` describe and runs it until SIGTERM, SIGINT or (with
    /// `--once`) the end of the queue. Throws ``DaemonOptionError`` for an option the daemon
    /// cannot use, or the reason the daemon could not start. `environment` gives the default
    /// places (state, feeds, stickers) and systemd's variables.
    public static func run(options: DaemonOptions,
                           environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        try await make(options: options, environment: environment, logger: Logger(label: "queueplayerd")).run()
    }

    /// The daemon that `options` describe, built but not started (``run()`` starts it). Throws
    /// ``DaemonOptionError`` for an option the daemon cannot use. `adjust` changes the
    /// configuration last: the in-process tests keep signals and stdout to the test process.
    static func make(options: DaemonOptions, environment: [String: String], logger: Logger,
                     adjust: (inout Configuration) -> Void = { _ in }) throws -> Daemon {
        let urls: [URL]
        if let media = options.media {
            do {
                urls = try MusicLibrary.topLevelFiles(in: URL(fileURLWithPath: media))
            } catch {
                throw DaemonOptionError("--media \(media): \(error.localizedDescription)")
            }
        } else {
            // A FILE argument may be a stream, checked as `add` checks one.
            urls = try options.files.map { file throws(DaemonOptionError) in
                guard StreamURL.hasScheme(file) else { return URL(fileURLWithPath: file) }
                do throws(MPDError) {
                    return try StreamURL.parse(file)
                } catch {
                    throw DaemonOptionError("\(file): \(error.message)")
                }
            }
        }
        let firstFile = options.files.first { !StreamURL.hasScheme($0) }
        let libraryRoot = options.media ?? options.musicDirectory ?? firstFile.map { ($0 as NSString).deletingLastPathComponent }
            ?? UserDirectories.home(environment: environment).appendingPathComponent("Music").path
        let root = URL(fileURLWithPath: libraryRoot.isEmpty ? "." : libraryRoot)
        let outputs = try OutputFactory.makeOutputs(for: options.outputs,
                                                    bufferTimeMicroseconds: UInt32(options.bufferTimeMilliseconds) * 1000,
                                                    logger: logger)
        var configuration = Configuration(
            // `--media DIR` asks to play DIR as FILE arguments ask to play them: either replaces a saved queue.
            files: urls, filesAreExplicit: options.media != nil || !options.files.isEmpty, exitWhenFinished: options.once,
            backgroundMode: options.backgroundMode, backgroundTime: options.backgroundTime,
            stateStore: options.once || options.noState ? nil : StateStore(file: StateStore.defaultFile(environment: environment)),
            feeds: FeedService.Options(feeds: options.feeds, rates: options.feedRates, file: FeedSubscriptionList.defaultFile(environment: environment),
                                       interval: options.fetchInterval, timeout: options.fetchTimeout,
                                       musicDirectory: root,
                                       maximumDownloadSize: options.maxDownloadSize, downloadLimit: options.downloadLimit,
                                       minimumFreeSpace: options.minFreeSpace),
            autoEnqueue: options.autoEnqueue,
            web: try webOptions(options, environment: environment),
            environment: environment)
        configuration.maxClients = options.maxClients
        configuration.connectionTimeout = options.connectionTimeout
        configuration.zeroconfName = options.zeroconf
            ? ZeroconfService.name(from: options.zeroconfName, hostName: ZeroconfService.hostName()) : nil
        configuration.streamRetryTime = options.streamRetryTime
        configuration.pace = PaceSettings(rate: options.rate, pitchAlgorithm: options.pitchAlgorithm, skipsSilence: options.skipSilence)
        configuration.loudness = options.loudness
        configuration.memory = PlaybackMemory.Options(rewind: options.resumeRewind, keepsStatistics: options.statisticsByDaemon)
        configuration.trustedCertificates = try options.caFile.map { path throws(DaemonOptionError) in
            do {
                return try TrustedCertificates(contentsOf: path)
            } catch {
                throw DaemonOptionError("--ca-file \(error).")
            }
        }
        (configuration.listeners, configuration.optionalListeners) = listeners(options, environment: environment)
        configuration.access = AccessPolicy(
            passwords: options.passwords.map { AccessPolicy.Password(secret: Array($0.secret.utf8), permissions: $0.permissions) },
            defaultPermissions: options.defaultPermissions, localPermissions: options.localPermissions,
            logger: logger)
        raiseDescriptorLimit(logger: logger)
        configuration.location = locationOptions(options)
        configuration.stickerFile = options.stickerFile.file(stateDirectory: configuration.stateStore?.file.deletingLastPathComponent(),
                                                             environment: environment)
        configuration.createsStickerDirectory = options.stickerFile == .besideState
        adjust(&configuration)
        return Daemon(configuration: configuration, library: MusicLibrary(root: root), outputs: outputs, logger: logger)
    }

    /// Where the control server listens: the Unix socket (`--socket`, or the default path)
    /// unless a `--bind` names one; the TCP addresses of `--bind`, or `localhost:6600` when no
    /// `--bind` is given, which is optional (taken by another program, say mpd, it is left out
    /// with a warning).
    static func listeners(_ options: DaemonOptions,
                          environment: [String: String] = ProcessInfo.processInfo.environment) -> (all: [ListenAddress], optional: Set<ListenAddress>) {
        let unix = options.binds.filter { if case .unix = $0 { true } else { false } }
        let tcp = options.binds.filter { if case .tcp = $0 { true } else { false } }
        let socket = unix.isEmpty ? [ListenAddress.unix(options.socket ?? defaultSocketPath(environment: environment))] : unix
        if options.binds.isEmpty {
            return (socket + [.conventionalTCP], [.conventionalTCP])
        }
        return (socket + tcp, [])
    }

    /// Raises the soft limit on open descriptors to the hard one: each client holds one, and
    /// the soft limit systemd and shells give (1024) is below what a crowd of clients and the
    /// downloads may need; the hard limit is what the administrator allows.
    static func raiseDescriptorLimit(logger: Logger) {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let soft = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(resource, &limit) == 0 {
            logger.debug("open files: the soft limit raised from \(soft) to \(limit.rlim_max)")
        } else {
            logger.warning("cannot raise the limit on open files from \(soft): \(String(cString: strerror(errno)))")
        }
    }

    /// `--http` and `--http-token-file`: a bind other than loopback needs a token.
    /// `QUEUEPLAYERD_HTTP_REQUEST_TIMEOUT` (seconds) replaces how long a request may take to come
    /// in, for the tests that watch a slow client being closed.
    private static func webOptions(_ options: DaemonOptions, environment: [String: String]) throws(DaemonOptionError) -> WebServer.Options? {
        guard let address = options.http else { return nil }
        let token = try options.httpTokenFile.map { file throws(DaemonOptionError) in try WebServer.readToken(file: file) }
        if token == nil && !address.isLoopback {
            throw DaemonOptionError("--http \(address) is reachable from other machines: give --http-token-file PATH too.")
        }
        var web = WebServer.Options(address: address, token: token)
        if let seconds = environment["QUEUEPLAYERD_HTTP_REQUEST_TIMEOUT"].flatMap(Double.init), seconds > 0 {
            web.requestTimeout = .nanoseconds(Int64(seconds * 1e9))
        }
        return web
    }

    /// `--location`, `location` in `--background-modes` and `--regions`; nil without `--location`.
    /// The regions file is read once the daemon's service group runs (``LocationService/readRegions()``),
    /// so that SIGTERM during a long read stops it.
    private static func locationOptions(_ options: DaemonOptions) -> LocationService.Options? {
        guard let source = options.location else { return nil }
        return LocationService.Options(source: source, backgroundUpdates: options.backgroundLocation, regionFile: options.regions)
    }
}

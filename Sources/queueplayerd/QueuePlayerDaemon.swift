import AppLifecycle
import ArgumentParser
import DaemonCore
import FeedFetch
import Foundation

/// `queueplayerd`: plays a queue of MP3 files through ALSA, like an iOS app with
/// the audio background mode.
@main
struct QueuePlayerDaemon: AsyncParsableCommand {
    /// As the library's, with a bare `--location` completed first (LocationArgument.swift).
    static func main() async {
        await main(LocationChoice.completingBareOption(Array(CommandLine.arguments.dropFirst())))
    }

    static let configuration = CommandConfiguration(
        commandName: "queueplayerd",
        abstract: "A headless, gapless MP3 queue player for ALSA.",
        discussion: """
            Queues the given MP3 files (or the .mp3 files of --media, sorted by name) and plays them \
            without gaps. Each new item is logged as "Now playing: <file name>"; when stdout is a \
            terminal, a status line below shows what plays.

            Like an iOS app, the daemon is active in the foreground. SIGUSR1 sends it to the \
            background, where it prints "Background: <seconds>" every 10 ms while playing; SIGUSR2 \
            brings it back. In the background, with nothing playing and no background task left, it \
            is suspended once its background time is spent: the audio device is closed until a \
            control command (play, next, ...) wakes it. SIGTERM or SIGINT stop it (status 0): \
            the state is saved, clients are disconnected, and what was written plays out.

            The queue, the current item, its position and play/pause are saved under \
            $XDG_STATE_HOME/queueplayerd/ and restored at the next start, unless --media DIR or \
            FILE arguments are given (they are played instead, and saved from then on), --once \
            is given, or --no-state. To resume the saved queue, start without --media and FILE \
            (with --music-directory DIR for the clients' library).

            Podcast feeds (--feed URL, and $XDG_CONFIG_HOME/queueplayerd/feeds: one URL a line, \
            # comments; read again on SIGHUP) are fetched in every app state, a suspended daemon \
            waking into the background for each fetch and suspending again after it: at most \
            every --fetch-interval seconds, with conditional requests, Retry-After honoured and \
            failures backing off. An MPD message on the channel queueplayerd, \
            '{"aps":{"content-available":1}}' (optionally with "feed":"URL"), fetches now. Each \
            result is logged: newData (N new episodes), noData or failed (why). New episodes are \
            downloaded into Podcasts/ in the music directory (resumable across restarts) and \
            appended to the queue (--no-auto-enqueue: not).
            """)

    @Option(name: .long, help: ArgumentHelp("A directory whose .mp3 files are queued, sorted by name, replacing a saved queue; it is also the music directory.", valueName: "DIR"))
    var media: String?

    @Option(name: .long, help: ArgumentHelp("The music directory that control-socket clients add from; at start, only a saved queue is queued.", valueName: "DIR"))
    var musicDirectory: String?

    @Option(name: .long, help: ArgumentHelp("The control socket (MPD protocol). Default: $XDG_RUNTIME_DIR/queueplayerd.sock.", valueName: "PATH"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("Where audio goes: auto, alsa, alsa:DEVICE, null, or fifo:PATH[?format=44100:16:2] (raw PCM for snapserver). Give it several times to play to several outputs at once; the first enabled one paces. Default: auto.", valueName: "OUTPUT"))
    var output: [OutputChoice] = []

    @Option(name: .long, help: ArgumentHelp("The ALSA device's buffer, in milliseconds (\(Self.bufferTimes.lowerBound) to \(Self.bufferTimes.upperBound)). A longer one wakes the daemon less often while playing, but a volume change is heard up to a buffer later.", valueName: "MS"))
    var bufferTime: Int = Daemon.defaultBufferTimeMilliseconds

    static let bufferTimes = Daemon.bufferTimesMilliseconds

    @Flag(name: .long, help: "Exit (status 0) once the queue has finished playing (implies --no-state).")
    var once = false

    @Option(name: .long, help: ArgumentHelp("What keeps running in the background, a comma list: audio (playback goes on; without it entering the background pauses), location (location updates go on), or none.", valueName: "MODES"))
    var backgroundModes: BackgroundModesChoice = BackgroundModesChoice(modes: [.audio])

    @Option(name: .long, help: ArgumentHelp("Seconds the daemon may run in the background without playing before it is suspended.", valueName: "SECONDS"))
    var backgroundTime: Double = 180

    @Flag(name: .long, help: "Neither restore nor save the queue and position.")
    var noState = false

    @Option(name: .long, help: ArgumentHelp("A podcast feed (RSS or Atom, http or https) to fetch in the background; give it once per feed. Added to the feeds file's.", valueName: "URL"))
    var feed: [String] = []

    @Option(name: .long, help: ArgumentHelp("The least time between two background fetches of a feed, in seconds, or never (only remote notifications fetch).", valueName: "SECONDS|never"))
    var fetchInterval: FetchIntervalChoice = .seconds(3600)

    @Flag(name: .long, inversion: .prefixedNo, help: "Append each downloaded episode to the queue.")
    var autoEnqueue = true

    @Option(name: .long, help: ArgumentHelp("Keep at most N downloaded episodes per feed: beyond N, the oldest ones played to their end are deleted (never the one playing, never one not heard). Default: keep all.", valueName: "N"))
    var downloadLimit: Int?

    @Option(name: .long, help: ArgumentHelp("Downloads stop (and are tried again later) rather than leave the music directory's file system with less than this many bytes free.", valueName: "BYTES"))
    var minFreeSpace: Int64 = 256 << 20

    @Option(name: .long, help: ArgumentHelp("The largest episode downloaded, in bytes; a larger one fails and leaves no file.", valueName: "BYTES"))
    var maxDownloadSize: Int64 = 2 << 30

    @Option(name: .long, help: ArgumentHelp("The time one fetch may take, body included, in seconds (30: iOS's limit for a background fetch).", valueName: "SECONDS"))
    var fetchTimeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Take location updates from gpsd (default localhost:2947); a bare --location is gpsd's default.", valueName: "gpsd[:HOST[:PORT]]"))
    var location: LocationChoice?

    @Option(name: .long, help: ArgumentHelp("A GPX file of waypoints to monitor as regions; entering one plays its audio as an announcement (implies --location).", valueName: "FILE.gpx"))
    var regions: String?

    @Argument(help: ArgumentHelp("MP3 files to queue, in order.", valueName: "FILE"))
    var files: [String] = []

    func validate() throws {
        if [media != nil, musicDirectory != nil, !files.isEmpty].filter({ $0 }).count > 1 {
            throw ValidationError("Give one of --media DIR, --music-directory DIR or FILE arguments.")
        }
        for (option, directory) in [("--media", media), ("--music-directory", musicDirectory)] {
            guard let directory else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("\(option) \(directory): no such directory.")
            }
        }
        guard Self.bufferTimes.contains(bufferTime) else {
            throw ValidationError("--buffer-time: give a number of milliseconds from \(Self.bufferTimes.lowerBound) to \(Self.bufferTimes.upperBound).")
        }
        guard backgroundTime.isFinite, backgroundTime >= 0 else {
            throw ValidationError("--background-time: give a number of seconds, 0 or more.")
        }
        for url in feed {
            if case .failure(let problem) = FeedSubscriptionList.feedURL(url) {
                throw ValidationError("--feed: \(problem.description).")
            }
        }
        if let downloadLimit, downloadLimit < 1 {
            throw ValidationError("--download-limit: give a number of episodes, 1 or more.")
        }
        guard minFreeSpace >= 0 else {
            throw ValidationError("--min-free-space: give a number of bytes, 0 or more.")
        }
        guard maxDownloadSize > 0 else {
            throw ValidationError("--max-download-size: give a number of bytes, more than 0.")
        }
        guard fetchTimeout.isFinite, fetchTimeout > 0, fetchTimeout <= 3600 else {
            throw ValidationError("--fetch-timeout: give a number of seconds, more than 0 and at most 3600.")
        }
        if let socket, socket.isEmpty || socket.utf8.count > 100 {
            throw ValidationError("--socket: a socket path must be 1 to 100 bytes long.")
        }
    }

    func run() async throws {
        Daemon.bootstrapLogging()
        var options = DaemonOptions()
        options.media = media
        options.musicDirectory = musicDirectory
        options.socket = socket
        options.outputs = output
        options.bufferTimeMilliseconds = bufferTime
        options.once = once
        options.backgroundMode = backgroundModes.mode
        options.backgroundLocation = backgroundModes.modes.contains(.location)
        options.location = location ?? (regions == nil ? nil : LocationChoice())
        options.regions = regions
        options.backgroundTime = backgroundTime
        options.noState = noState
        options.feeds = feed.compactMap { try? FeedSubscriptionList.feedURL($0).get() }
        options.fetchInterval = fetchInterval.seconds
        options.autoEnqueue = autoEnqueue
        options.downloadLimit = downloadLimit
        options.minFreeSpace = minFreeSpace
        options.maxDownloadSize = maxDownloadSize
        options.fetchTimeout = fetchTimeout
        options.files = files
        do {
            try await Daemon.run(options: options)
        } catch let error as DaemonOptionError {
            throw ValidationError(error.description)
        }
    }
}

/// `--background-modes`: the `UIBackgroundModes` of the daemon.
enum BackgroundModeChoice: String, ExpressibleByArgument, CaseIterable {
    case audio, none, location

    var mode: Application.BackgroundMode { self == .audio ? .audio : .none }
}

/// `--fetch-interval`: seconds (more than 0), or `never`.
enum FetchIntervalChoice: ExpressibleByArgument, Equatable {
    case seconds(Double)
    case never

    init?(argument: String) {
        if argument == "never" {
            self = .never
        } else if let seconds = Double(argument), seconds.isFinite, seconds > 0 {
            self = .seconds(seconds)
        } else {
            return nil
        }
    }

    /// The interval, nil for `never`.
    var seconds: Double? {
        if case .seconds(let seconds) = self { return seconds }
        return nil
    }

    var defaultValueDescription: String {
        switch self {
        case .seconds(let seconds): seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        case .never: "never"
        }
    }
}

extension OutputChoice: ExpressibleByArgument {}

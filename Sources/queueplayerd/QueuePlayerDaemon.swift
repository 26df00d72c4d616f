import AppLifecycle
import ArgumentParser
import CShims
import DaemonCore
import Dispatch
import FeedFetch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import QueuePlayer

/// `queueplayerd`: plays a queue of MP3 files through ALSA, like an iOS app with
/// the audio background mode.
@main
struct QueuePlayerDaemon: AsyncParsableCommand {
    /// As the library's, with a bare `--location` completed first (LocationArgument.swift), and
    /// synchronous: the main thread starts the command as a task and waits for it to end.
    ///
    /// An `async` main would hand the main thread to `dispatchMain()`, which ends it with
    /// `pthread_exit`: glibc's forced unwind of its stack reads the executable's unwind tables
    /// (`.eh_frame_hdr`, `.eh_frame`, `.gcc_except_table`), and the kernel maps them in large
    /// page-cache blocks, resident for the daemon's whole life. The main
    /// thread therefore does not serve the main dispatch queue: nothing in the daemon uses it
    /// (every time observer and every queue of its own is named), and nothing may.
    static func main() {
        // glibc gives each thread that meets contention a malloc arena of its own (up to eight a
        // core), each keeping freed memory resident; the daemon's threads allocate little and the
        // render thread nothing per buffer, so two are enough, and fewer arenas keep less resident.
        cshims_limit_malloc_arenas(2)
        // ArgumentParser writes its errors to C's stderr a byte at a time (`putc`), and stderr is
        // unbuffered: a write(2) call per byte of a bad argument's message. Line-buffered, they
        // are one per line. The daemon's own log does not go through stdio (it writes fd 2).
        cshims_line_buffer_stderr()
        let arguments = LocationChoice.completingBareOption(Array(CommandLine.arguments.dropFirst()))
        // The ALSA device is opened at start; alsa-lib's configuration, most of that open's
        // cost, loads on another core while the arguments are parsed, shortening the launch.
        if OutputChoice.commandLineMayOpenALSA(arguments) { ALSAConfiguration.loadInBackground() }
        // ArgumentParser's main exits itself on an error (with its status); on success it returns.
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await main(arguments)
            finished.signal()
        }
        finished.wait()
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

            Streams: FILE arguments and clients' add may be http:// or https:// URLs of MP3 \
            streams (internet radio, podcast episodes from their enclosure URL). A stream's \
            icy-name and StreamTitle are currentsong's Name and Title; status keeps state: play \
            while the network lags and says buffer: and waiting:; a dropped connection is opened \
            again, with back-off, for --stream-retry-time seconds, then the item fails \
            ("cannot play: <url>: <why>") and the queue moves on. load and listplaylist take a \
            remote .m3u or .pls URL.

            Every option can also be set in the configuration file, \
            $XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml (or --config PATH), with the same \
            name: buffer-time = 1000, output = ["auto", "fifo:/tmp/snapfifo"], once = true, \
            files = ["a.mp3"]. Options given on the command line win over the file; --media, \
            --music-directory or FILE arguments replace all three of the file's. A mistake in the \
            file is reported with its line, and the daemon does not start.
            """,
        version: DaemonVersion.description)

    @Option(name: .long, help: ArgumentHelp("The configuration file: TOML whose keys are the options below, by the same names (buffer-time = 1000, output = [\"auto\", \"fifo:/tmp/snapfifo\"], files = [...]); an option given here wins over the file. Default: $XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml, if it exists.", valueName: "PATH"))
    var config: String?

    // Each setting is nil unless given here, so that one left out takes the file's value (then
    // the default, from DaemonOptions, which the help texts quote).

    @Option(name: .long, help: ArgumentHelp("A directory whose .mp3 files are queued, sorted by name, replacing a saved queue; it is also the music directory.", valueName: "DIR"))
    var media: String?

    @Option(name: .long, help: ArgumentHelp("The music directory that control-socket clients add from; at start, only a saved queue is queued.", valueName: "DIR"))
    var musicDirectory: String?

    @Option(name: .long, help: ArgumentHelp("The control socket (MPD protocol). Default: $XDG_RUNTIME_DIR/queueplayerd.sock.", valueName: "PATH"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("Listen here too (mpd's bind_to_address); give it once per listener: a Unix socket path (it replaces --socket's), or HOST[:PORT] for TCP: an IPv4 address, [IPv6]:PORT, localhost or any (PORT: 6600). Default: the Unix socket and localhost:6600.", valueName: "ADDRESS"))
    var bind: [String] = []

    @Option(name: .long, help: ArgumentHelp("A password and what it allows (mpd's password): a client that sends `password SECRET` may then do PERMISSIONS, some of read,add,player,control,admin. Give it once per password. With a password, clients without one may do only --default-permissions (none by default). The command line is visible to other users (ps): prefer the configuration file's password = [...].", valueName: "SECRET@PERMISSIONS"))
    var password: [String] = []

    @Option(name: .long, help: ArgumentHelp("What clients may do before a password (comma-separated permissions). Default: everything without --password, nothing with one; clients from other machines may only read when neither is given.", valueName: "PERMISSIONS"))
    var defaultPermissions: String?

    @Option(name: .long, help: ArgumentHelp("What clients on a Unix socket may do before a password. Default: --default-permissions.", valueName: "PERMISSIONS"))
    var localPermissions: String?

    @Option(name: .long, help: ArgumentHelp("Where audio goes: auto, alsa, alsa:DEVICE, null, or fifo:PATH[?format=44100:16:2] (raw PCM for snapserver). Give it several times to play to several outputs at once; the first enabled one paces. Default: auto.", valueName: "OUTPUT"))
    var output: [OutputChoice] = []

    @Option(name: .long, help: ArgumentHelp("The ALSA device's buffer, in milliseconds (\(Daemon.bufferTimesMilliseconds.lowerBound) to \(Daemon.bufferTimesMilliseconds.upperBound)). A longer one wakes the daemon less often while playing, but a volume change is heard up to a buffer later.\(Self.defaultNote(Self.defaults.bufferTimeMilliseconds))", valueName: "MS"))
    var bufferTime: Int?

    @Flag(name: .long, help: "Exit (status 0) once the queue has finished playing (implies --no-state).")
    var once = false

    @Option(name: .long, help: ArgumentHelp("What keeps running in the background, a comma list: audio (playback goes on; without it entering the background pauses), location (location updates go on), or none.\(Self.defaultNote(BackgroundModesChoice()))", valueName: "MODES"))
    var backgroundModes: BackgroundModesChoice?

    @Option(name: .long, help: ArgumentHelp("Seconds the daemon may run in the background without playing before it is suspended.\(Self.defaultNote(Self.defaults.backgroundTime))", valueName: "SECONDS"))
    var backgroundTime: Double?

    @Flag(name: .long, help: "Neither restore nor save the queue and position.")
    var noState = false

    @Option(name: .long, help: ArgumentHelp("A podcast feed (RSS or Atom, http or https) to fetch in the background; give it once per feed. Added to the feeds file's.", valueName: "URL"))
    var feed: [String] = []

    @Option(name: .long, help: ArgumentHelp("The least time between two background fetches of a feed, in seconds, or never (only remote notifications fetch).\(Self.defaultNote(Self.defaultFetchInterval.defaultValueDescription))", valueName: "SECONDS|never"))
    var fetchInterval: FetchIntervalChoice?

    @Flag(name: .long, inversion: .prefixedNo, help: "Append each downloaded episode to the queue. (default: --auto-enqueue)")
    var autoEnqueue: Bool?

    @Option(name: .long, help: ArgumentHelp("Keep at most N downloaded episodes per feed: beyond N, the oldest ones played to their end are deleted (never the one playing, never one not heard). Default: keep all.", valueName: "N"))
    var downloadLimit: Int?

    @Option(name: .long, help: ArgumentHelp("Downloads stop (and are tried again later) rather than leave the music directory's file system with less than this many bytes free.\(Self.defaultNote(Self.defaults.minFreeSpace))", valueName: "BYTES"))
    var minFreeSpace: Int64?

    @Option(name: .long, help: ArgumentHelp("The largest episode downloaded, in bytes; a larger one fails and leaves no file.\(Self.defaultNote(Self.defaults.maxDownloadSize))", valueName: "BYTES"))
    var maxDownloadSize: Int64?

    @Option(name: .long, help: ArgumentHelp("The time one fetch may take, body included, in seconds (30: iOS's limit for a background fetch).\(Self.defaultNote(Self.defaults.fetchTimeout))", valueName: "SECONDS"))
    var fetchTimeout: Double?

    @Option(name: .long, help: ArgumentHelp("How long a stream (an http:// or https:// item) whose connection dropped or stalled is tried again, in seconds, the waits between tries growing from 0.5 s to 30 s; then it fails and the queue moves on.\(Self.defaultNote(Self.defaults.streamRetryTime))", valueName: "SECONDS"))
    var streamRetryTime: Double?

    @Option(name: .long, help: ArgumentHelp("A file of PEM certificates to trust besides the system's for https:// streams (a station behind a private certificate authority). Read at start-up: a file that cannot be read, or holds no certificate, is an error.", valueName: "PATH"))
    var caFile: String?

    @Option(name: .long, help: ArgumentHelp("The most clients served at once (mpd's max_connections); one more is closed at once.\(Self.defaultNote(Self.defaults.maxClients))", valueName: "N"))
    var maxClients: Int?

    @Option(name: .long, help: ArgumentHelp("Disconnect a client that sends no complete command for this long, in seconds, unless it waits in idle (mpd's connection_timeout), so that silent clients do not keep the places of --max-clients.\(Self.defaultNote(Self.defaults.connectionTimeout))", valueName: "SECONDS"))
    var connectionTimeout: Double?

    @Flag(name: .long, inversion: .prefixedNo, help: "Publish the MPD service (_mpd._tcp) on the TCP listener's port through Avahi (Zeroconf), as mpd does, so that clients on the network find it; a listener on a loopback address is announced to this machine only. Without Avahi the daemon runs as ever, and publishes once Avahi starts. (default: --zeroconf)")
    var zeroconf: Bool?

    @Option(name: .long, help: ArgumentHelp("The name the service is published under (mpd's zeroconf_name); %h is this machine's name.\(Self.defaultNote(Self.defaults.zeroconfName))", valueName: "NAME"))
    var zeroconfName: String?

    @Option(name: .long, help: ArgumentHelp("Serve the web page and the WebSocket API (docs/websocket.md) on [ADDR:]PORT (ADDR: 127.0.0.1), or off. `make run` and the systemd unit use 127.0.0.1:6680. (default: off)", valueName: "[ADDR:]PORT|off"))
    var http: String?

    @Option(name: .long, help: ArgumentHelp("A file whose first line is the token every web request must carry; required when --http binds an address other than loopback.", valueName: "PATH"))
    var httpTokenFile: String?

    @Option(name: .long, help: ArgumentHelp("Take location updates from gpsd (default localhost:2947); a bare --location is gpsd's default.", valueName: "gpsd[:HOST[:PORT]]"))
    var location: LocationChoice?

    @Option(name: .long, help: ArgumentHelp("A GPX file of waypoints to monitor as regions; entering one plays its audio as an announcement (implies --location).", valueName: "FILE.gpx"))
    var regions: String?

    @Option(name: .long, help: ArgumentHelp("The SQLite file of the stickers clients attach to songs (ratings, play counts: mpd's sticker_file, same schema), or off. A file that cannot be opened is logged and the daemon runs without stickers. (default: sticker.sql beside the saved state)", valueName: "PATH|off"))
    var stickerFile: String?

    @Argument(help: ArgumentHelp("MP3 files, or http:// and https:// URLs of MP3 streams, to queue, in order.", valueName: "FILE"))
    var files: [String] = []

    /// The defaults that `--help` quotes: the daemon's own.
    private static let defaults = DaemonOptions()
    private static let defaultFetchInterval = defaults.fetchInterval.map(FetchIntervalChoice.seconds) ?? .never

    /// ` (default: VALUE)`, as ArgumentParser writes it for an option that is not optional.
    private static func defaultNote(_ value: some CustomStringConvertible) -> String { " (default: \(value))" }

    /// What the command line says; nil (or false, for a flag that can only say true) where it says nothing.
    private var commandLine: DaemonSettings {
        var settings = DaemonSettings()
        settings.media = media
        settings.musicDirectory = musicDirectory
        settings.socket = socket
        settings.binds = bind.isEmpty ? nil : bind
        settings.passwords = password.isEmpty ? nil : password
        settings.defaultPermissions = defaultPermissions
        settings.localPermissions = localPermissions
        settings.outputs = output.isEmpty ? nil : output
        settings.bufferTime = bufferTime
        settings.once = once ? true : nil
        settings.backgroundModes = backgroundModes
        settings.backgroundTime = backgroundTime
        settings.noState = noState ? true : nil
        settings.feeds = feed.isEmpty ? nil : feed
        settings.fetchInterval = fetchInterval
        settings.autoEnqueue = autoEnqueue
        settings.downloadLimit = downloadLimit
        settings.minFreeSpace = minFreeSpace
        settings.maxDownloadSize = maxDownloadSize
        settings.fetchTimeout = fetchTimeout
        settings.streamRetryTime = streamRetryTime
        settings.caFile = caFile
        settings.maxClients = maxClients
        settings.connectionTimeout = connectionTimeout
        settings.zeroconf = zeroconf
        settings.zeroconfName = zeroconfName
        settings.http = http
        settings.location = location
        settings.regions = regions
        settings.httpTokenFile = httpTokenFile
        settings.stickerFile = stickerFile.map(StickerFileChoice.init(argument:))
        settings.files = files.isEmpty ? nil : files
        return settings
    }

    /// The configuration file under the command line, checked: a mistake in either is a usage
    /// error (status 64), before anything starts.
    private func options(environment: [String: String]) throws -> DaemonOptions {
        do {
            return try commandLine.options(over: ConfigurationFile.load(path: config, environment: environment))
        } catch let error as ConfigurationFileError {
            throw ValidationError(error.description)
        } catch let error as DaemonOptionError {
            throw ValidationError(error.description)
        }
    }

    // No `validate()`: ArgumentParser calls it before it reports unknown options, so a mistyped
    // option whose value was taken for a FILE (`--media DIR --prot 6600`) would be reported as
    // "give one of --media DIR, ... or FILE arguments" instead of "Unknown option '--prot'".
    // The same checks run first thing in `run()`, and a ValidationError from there is printed
    // the same way (with the usage, status 64); the options are read once, not twice.
    func run() async throws {
        // Read once for the whole start-up: `ProcessInfo.processInfo.environment` builds the
        // dictionary afresh at each call, a noticeable part of a launch's work.
        let environment = ProcessInfo.processInfo.environment
        let options = try options(environment: environment)
        Daemon.bootstrapLogging(environment: environment)
        do {
            try await Daemon.run(options: options, environment: environment)
        } catch let error as DaemonOptionError {
            throw ValidationError(error.description)
        }
    }
}

// The choices' parsing lives in DaemonCore, which the configuration file shares.
extension OutputChoice: ExpressibleByArgument {}
extension BackgroundModesChoice: ExpressibleByArgument {
    public var defaultValueDescription: String { description }
}
extension FetchIntervalChoice: ExpressibleByArgument {}

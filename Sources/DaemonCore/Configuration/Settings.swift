import AppLifecycle
import FeedFetch
import Foundation
import MPDProtocol
import QueuePlayer
import TOMLKit

/// Every setting of the daemon, each declared once: its option and key, its value, its default,
/// its checks, its help and what it sets on ``DaemonOptions``. The command line
/// (``SettingsCommandLine``), the configuration file (``ConfigurationFile``), `--help`, the man
/// pages, docs/settings.md and the example file all come from these declarations
/// (``SettingsDocuments``); ``all`` lists them in the order declared, which is the order of the
/// documents and the order the values are checked in.
public struct Settings: Sendable {
    // MARK: What to play

    public let media = Setting(
        "media", .path, group: .playing, example: #""~/Music/Album""#, value: "DIR", oneOf: "playing",
        summary: "Queue DIR's .mp3 files, replacing the saved queue",
        manual: """
            A directory whose .mp3 files are queued, sorted by name, in place of a saved queue; it \
            is also the music directory clients add from. One of media, music-directory and the \
            files may be given.
            """) { directory, options throws(SettingProblem) in
                try Settings.requireDirectory(directory)
                options.media = directory
            }

    public let musicDirectory = Setting(
        "music-directory", .path, group: .playing, value: "DIR", default: "~/Music", oneOf: "playing",
        summary: "The library clients add from",
        manual: """
            The music directory that clients add from (the library, and where podcast episodes are \
            downloaded, under Podcasts/). At start only a saved queue is queued. Without it, \
            the directory of --media, or of the first FILE, or ~/Music is the library.
            """) { directory, options throws(SettingProblem) in
                try Settings.requireDirectory(directory)
                options.musicDirectory = directory
            }

    public let files = Setting(
        "files", .strings(resolving: { reader, text in reader.resolve(text) }), group: .playing, example: #"["~/a.mp3", "https://example.com/radio.mp3"]"#, value: "FILE",
        positional: true, oneOf: "playing",
        summary: "MP3 files or stream URLs to queue, in order",
        manual: """
            MP3 files, or http:// and https:// URLs of MP3 streams (internet radio, podcast \
            episodes), queued in this order in place of a saved queue. On the command line they \
            are the arguments after the options; in the file, an array.
            """) { files, options throws(SettingProblem) in options.files = files }

    // MARK: Output

    public let output = Setting(
        "output", .choices(OutputChoice.init(argument:), refusal: { text in
            "'\(text)' is not an output: give " + OutputChoice.allValueStrings.joined(separator: ", ")
        }), group: .output, value: "OUTPUT", default: "auto", values: ["auto", "alsa", "alsa:", "null", "fifo:"],
        summary: "auto, alsa[:DEVICE], null or fifo:PATH; repeatable",
        manual: """
            Where audio goes. auto is ALSA's default device, or a real-time null output when it \
            does not open (decided at start); alsa:DEVICE insists on that device; null discards \
            the audio in real time; fifo:PATH writes raw signed 16-bit little-endian PCM into the \
            named pipe PATH (for snapserver), at 44100:16:2 unless ?format=RATE:16:CHANNELS says \
            otherwise. Give it several times to play to several outputs at once: the first \
            enabled one paces playback, and clients switch each with enableoutput and disableoutput.
            """) { outputs, options throws(SettingProblem) in options.outputs = outputs }

    public let bufferTime = Setting(
        "buffer-time", .integer, group: .output, value: "MS", default: "\(Settings.defaults.bufferTimeMilliseconds)",
        summary: "The ALSA buffer in milliseconds (\(Daemon.bufferTimesMilliseconds.lowerBound) to \(Daemon.bufferTimesMilliseconds.upperBound))",
        manual: """
            The ALSA device's buffer, in milliseconds, from \(Daemon.bufferTimesMilliseconds.lowerBound) \
            to \(Daemon.bufferTimesMilliseconds.upperBound). A longer one wakes the daemon less \
            often while playing, but the volume is applied before the buffer, so a change is heard \
            up to a buffer later.
            """,
        into: \.bufferTimeMilliseconds) { milliseconds in
            let range = Daemon.bufferTimesMilliseconds
            return range.contains(milliseconds) ? nil : "give a number of milliseconds from \(range.lowerBound) to \(range.upperBound)"
        }

    // MARK: Even loudness

    public let replayGain = Setting(
        "replaygain", .choice(fileType: "\"off\", \"track\", \"album\" or \"auto\"", ReplayGainMode.init(rawValue:),
                              refusal: { "'\($0)' is not a replay gain mode: give \(ReplayGainMode.valueList)" }),
        group: .output, value: "MODE", default: "off", values: ReplayGainMode.allCases.map(\.rawValue),
        summary: "ReplayGain at start: off, track, album or auto",
        manual: """
            The ReplayGain mode at start, as mpd's replaygain: off, track (each file's track gain), \
            album (its album gain) or auto (album while the queue plays in order, track while it \
            plays at random). Clients change it with replay_gain_mode; the mode is saved with the \
            state, which then wins over this setting.
            """) { mode, options throws(SettingProblem) in options.loudness.mode = mode }

    public let replayGainPreamp = Setting(
        "replaygain-preamp", .number, group: .output, value: "DB", default: "0",
        summary: "dB added to a file's ReplayGain (-15 to 15)",
        manual: """
            Decibels added to the gain of a file with ReplayGain tags, from -15 to 15 (mpd's \
            replaygain_preamp).
            """) { decibels, options throws(SettingProblem) in
                guard decibels.isFinite, (-15...15).contains(decibels) else { throw SettingProblem("give a number of dB from -15 to 15") }
                options.loudness.preamp = decibels
            }

    public let replayGainMissingPreamp = Setting(
        "replaygain-missing-preamp", .number, group: .output, value: "DB", default: "0",
        summary: "dB for a file without ReplayGain (-15 to 15)",
        manual: """
            The gain, in decibels from -15 to 15, of a file without ReplayGain tags (and without \
            a measurement, when loudness-target is set) while ReplayGain is on (mpd's \
            replaygain_missing_preamp).
            """) { decibels, options throws(SettingProblem) in
                guard decibels.isFinite, (-15...15).contains(decibels) else { throw SettingProblem("give a number of dB from -15 to 15") }
                options.loudness.missingPreamp = decibels
            }

    public let replayGainLimit = Setting(
        "replaygain-limit", .flag, group: .output, default: "on", inversion: true,
        summary: "Keep ReplayGain from clipping (the tag's peak)",
        manual: """
            Lower a file's ReplayGain so that its tagged peak does not clip (mpd's replaygain_limit).
            """) { on, options throws(SettingProblem) in options.loudness.limit = on }

    public let loudnessTarget = Setting(
        "loudness-target", SettingKind<Double?>(
            fileType: "a number of LUFS or \"off\"", isFlag: false, isRepeatable: false,
            argument: { text, _ in Settings.loudnessTarget(text).map { .success($0) } ?? .failure(Settings.loudnessTargetProblem) },
            file: { value, reader throws(SettingProblem) in
                if value.string == "off" { return nil }
                let lufs = try reader.number(value, expected: "a number of LUFS or \"off\"")
                guard let target = Settings.loudnessTarget(String(lufs)) else { throw Settings.loudnessTargetProblem }
                return target
            }),
        group: .output, example: "-16", value: "LUFS|off", default: "off", values: ["off"],
        summary: "Play measured files without ReplayGain at LUFS",
        manual: """
            The loudness, in LUFS from -40 to -5, at which a file without ReplayGain tags plays \
            once it was measured (a downloaded episode, or loudnessscan), its gain lowered so that \
            its true peak stays at or below -1 dBTP; -16 is the usual podcast target. off (the \
            default) plays every file as it is.
            """) { target, options throws(SettingProblem) in options.loudness.target = target }

    /// `loudness-target`'s value: LUFS from -40 to -5 (`.some(nil)` for "off"); nil: neither.
    static func loudnessTarget(_ text: String) -> Double?? {
        if text == "off" { return .some(nil) }
        guard let lufs = Double(text), lufs.isFinite, (-40 ... -5).contains(lufs) else { return nil }
        return lufs
    }

    static let loudnessTargetProblem = SettingProblem("give a loudness target in LUFS from -40 to -5, or off")

    // MARK: Clients and the control socket

    public let socket = Setting(
        "socket", .path, group: .clients, example: #""/run/user/1000/mpd.sock""#, value: "PATH", default: "$XDG_RUNTIME_DIR/queueplayerd.sock",
        summary: "The control socket (MPD protocol)",
        manual: """
            The Unix control socket, where MPD clients connect. A --bind that names a socket \
            replaces it.
            """, into: \.socket) { path in
            path.isEmpty || path.utf8.count > 100 ? "a socket path must be 1 to 100 bytes long" : nil
        }

    public let bind = Setting(
        "bind", .strings(resolving: { reader, text in
            // A socket path is beside the file, as every path of the file is.
            text.hasPrefix("/") || text.hasPrefix("~") || text.hasPrefix(".") ? reader.resolve(text) : text
        }), group: .clients, example: #"["localhost:6600", "192.168.1.10:6600", "[::1]:6600"]"#, value: "ADDRESS", default: "the socket and localhost:6600",
        summary: "Listen here too: PATH or HOST[:PORT]; repeatable",
        manual: """
            Where the control server listens, as mpd's bind_to_address, once per listener: a Unix \
            socket path (it replaces the socket's), or HOST[:PORT] for TCP, HOST an IPv4 address, \
            [IPv6], localhost or any, PORT 6600 when left out. With none given, the daemon listens \
            on the socket and on localhost:6600 (left out, with a warning, when another program has it).
            """) { texts, options throws(SettingProblem) in
                options.binds = try texts.map { text throws(SettingProblem) in
                    do throws(DaemonOptionError) {
                        return try ListenAddress.parse(text)
                    } catch {
                        throw SettingProblem(error.description.hasPrefix("--bind ")
                                             ? String(error.description.dropFirst(7).dropLast()) : error.description)
                    }
                }
            }

    public let password = Setting(
        "password", .strings, group: .clients, example: #"["s3cret@read,add,player,control,admin", "guest@read"]"#, value: "SECRET@PERMISSIONS",
        summary: "A password and what it allows; repeatable",
        manual: """
            A password and what it allows, as mpd's password: a client that sends "password SECRET" \
            may then do PERMISSIONS, some of read, add, player, control and admin, comma-separated. \
            Give it once per password. With a password, clients without one may do only what \
            default-permissions allows. The command line is visible to other users (ps): prefer the \
            configuration file.
            """) { texts, options throws(SettingProblem) in
                options.passwords = try texts.map { text throws(SettingProblem) in
                    do throws(DaemonOptionError) {
                        return try PasswordSetting.parse(text)
                    } catch {
                        throw SettingProblem(error.description)
                    }
                }
            }

    public let defaultPermissions = Setting(
        "default-permissions", .string, group: .clients, example: #""read""#, value: "PERMISSIONS",
        default: "everything without a password, nothing with one",
        summary: "What clients may do before a password",
        manual: """
            What clients may do before they send a password, some of read, add, player, control \
            and admin, comma-separated (mpd's default_permissions). When neither this nor a \
            password is given, clients from other machines may only read.
            """) { text, options throws(SettingProblem) in options.defaultPermissions = try Settings.permissions(text) }

    public let localPermissions = Setting(
        "local-permissions", .string, group: .clients, example: #""read,add,player,control,admin""#, value: "PERMISSIONS", default: "default-permissions",
        summary: "The same, for clients on a Unix socket",
        manual: """
            What clients on a Unix socket may do before they send a password, as \
            default-permissions says it.
            """) { text, options throws(SettingProblem) in options.localPermissions = try Settings.permissions(text) }

    public let maxClients = Setting(
        "max-clients", .integer, group: .clients, value: "N", default: "\(Settings.defaults.maxClients)",
        summary: "The most clients served at once",
        manual: """
            The most clients served at once over every listener (mpd's max_connections); one more \
            is closed as soon as it connects.
            """, into: \.maxClients) { $0 >= 1 ? nil : "give a number of clients, 1 or more" }

    public let connectionTimeout = Setting(
        "connection-timeout", .number, group: .clients, value: "SECONDS", default: Settings.text(Settings.defaults.connectionTimeout),
        summary: "Disconnect a client silent this long, unless idle",
        manual: """
            A client that sends no complete command for this many seconds, and is not waiting in \
            idle, is disconnected (mpd's connection_timeout), so that silent clients do not keep \
            the places of max-clients. At most 86400.
            """, into: \.connectionTimeout) { seconds in
            seconds.isFinite && seconds > 0 && seconds <= 86_400 ? nil : "give a number of seconds, more than 0 and at most 86400"
        }

    public let zeroconf = Setting(
        "zeroconf", .flag, group: .clients, default: Settings.text(Settings.defaults.zeroconf), inversion: true,
        summary: "Publish _mpd._tcp through Avahi (Zeroconf)",
        manual: """
            Publish the MPD service (_mpd._tcp) on the TCP listener's port through Avahi, as mpd \
            does, so that clients on the network find it; a listener on a loopback address is \
            announced to this machine only. Without Avahi the daemon runs as ever, and publishes \
            once Avahi starts.
            """, into: \.zeroconf)

    public let zeroconfName = Setting(
        "zeroconf-name", .string, group: .clients, value: "NAME", default: Settings.defaults.zeroconfName,
        summary: "The published name (%h: this machine's name)",
        manual: """
            The name the service is published under (mpd's zeroconf_name); %h is this machine's name.
            """, into: \.zeroconfName) { name in
            name.isEmpty || name.contains(where: \.isNewline) ? "give a name of one line (%h: this machine's name)" : nil
        }

    public let stickerFile = Setting(
        "sticker-file", SettingKind<StickerFileChoice>(
            fileType: "a file path or \"off\"", isFlag: false, isRepeatable: false,
            argument: { text, _ in .success(StickerFileChoice(argument: text)) },
            file: { value, reader throws(SettingProblem) in
                let text = try reader.string(value, expected: "a file path or \"off\"")
                guard !text.isEmpty else { throw SettingProblem("give a file path or \"off\"") }
                return text == "off" ? .off : .file(reader.resolve(text))
            }),
        group: .clients, example: #""off""#, value: "PATH|off", default: "sticker.sql beside the saved state", values: ["off"],
        summary: "The stickers' SQLite database, or off",
        manual: """
            The SQLite file of the stickers clients attach to songs (ratings, play counts: mpd's \
            sticker_file, the same schema), or off. A file that cannot be opened is logged, and \
            the daemon runs without stickers.
            """) { choice, options throws(SettingProblem) in
                if case .file(let path) = choice, path.isEmpty { throw SettingProblem("give a file path or off") }
                options.stickerFile = choice
            }

    // MARK: Background and saved state

    public let once = Setting(
        "once", .flag, group: .lifecycle, default: Settings.text(Settings.defaults.once),
        summary: "Exit when the queue has played; implies --no-state",
        manual: """
            Exit with status 0 once the queue has finished playing, instead of waiting with an \
            empty queue. Implies no-state.
            """, into: \.once)

    public let noState = Setting(
        "no-state", .flag, group: .lifecycle, default: Settings.text(Settings.defaults.noState),
        summary: "Neither restore nor save the queue and position",
        manual: """
            Neither restore nor save the queue, the current item, its position and play or pause \
            (kept under $XDG_STATE_HOME/queueplayerd/ otherwise).
            """, into: \.noState)

    public let backgroundModes = Setting(
        "background-modes", .choice(
            fileType: "\"audio\", \"location\", \"audio,location\" or \"none\"", BackgroundModesChoice.init(argument:),
            refusal: { "'\($0)' is not a list of modes: give \"audio\", \"location\", \"audio,location\" or \"none\"" }),
        group: .lifecycle, value: "MODES",
        default: BackgroundModesChoice(audio: Settings.defaults.backgroundMode == .audio, location: Settings.defaults.backgroundLocation).description,
        values: BackgroundModesChoice.allValueStrings,
        summary: "What goes on in the background (audio, location)",
        manual: """
            What keeps running in the background, a comma list: audio (playback goes on; without \
            it, entering the background pauses) and location (location updates go on), or none.
            """) { modes, options throws(SettingProblem) in
                options.backgroundMode = modes.mode
                options.backgroundLocation = modes.location
            }

    public let backgroundTime = Setting(
        "background-time", .number, group: .lifecycle, value: "SECONDS", default: Settings.text(Settings.defaults.backgroundTime),
        summary: "Seconds in the background idle before suspension",
        manual: """
            How long the daemon may run in the background without playing before it is suspended: \
            the audio device is closed until a control command (play, next, ...) wakes it.
            """, into: \.backgroundTime) { seconds in
            seconds.isFinite && seconds >= 0 ? nil : "give a number of seconds, 0 or more"
        }

    // MARK: Podcasts and downloads

    public let feed = Setting(
        "feed", .strings, group: .podcasts, example: #"["https://example.com/podcast.xml"]"#, value: "URL",
        summary: "A podcast feed (RSS, Atom) to fetch; repeatable",
        manual: """
            A podcast feed (RSS or Atom, http or https) to fetch in the background, once per feed; \
            added to those of the feeds file, $XDG_CONFIG_HOME/queueplayerd/feeds (one URL a line, \
            read again on SIGHUP). "URL rate=R" (here or in the file) plays its episodes at the \
            rate R (\(PaceSettings.rangeText)) instead of the daemon's.
            """) { urls, options throws(SettingProblem) in
                options.feeds = []
                for text in urls {
                    switch FeedSubscriptionList.subscription(text) {
                    case .success(let (url, rate)):
                        options.feeds.append(url)
                        if let rate { options.feedRates[url] = rate }
                    case .failure(let problem): throw SettingProblem(problem.description)
                    }
                }
            }

    public let fetchInterval = Setting(
        "fetch-interval", SettingKind<FetchIntervalChoice>(
            fileType: "a number of seconds or \"never\"", isFlag: false, isRepeatable: false,
            argument: { text, _ in
                FetchIntervalChoice(argument: text).map { .success($0) }
                    ?? .failure(SettingProblem("give a number of seconds more than 0, or \"never\""))
            },
            file: { value, reader throws(SettingProblem) in
                if value.string == "never" { return .never }
                let seconds = try reader.number(value, expected: "a number of seconds or \"never\"")
                guard let interval = FetchIntervalChoice(seconds: seconds) else {
                    throw SettingProblem("give a number of seconds more than 0, or \"never\"")
                }
                return interval
            }),
        group: .podcasts, value: "SECONDS|never", default: Settings.defaults.fetchInterval.map(Settings.text) ?? "never", values: ["never"],
        summary: "The least time between two fetches of a feed",
        manual: """
            The least time between two background fetches of a feed, in seconds, or never (only \
            remote notifications fetch: an MPD message on the channel queueplayerd).
            """) { interval, options throws(SettingProblem) in options.fetchInterval = interval.seconds }

    public let fetchTimeout = Setting(
        "fetch-timeout", .number, group: .podcasts, value: "SECONDS", default: Settings.text(Settings.defaults.fetchTimeout),
        summary: "The time one fetch may take, body included",
        manual: """
            The time one fetch may take, body included, in seconds, at most 3600 (30 is iOS's \
            limit for a background fetch).
            """, into: \.fetchTimeout) { seconds in
            seconds.isFinite && seconds > 0 && seconds <= 3600 ? nil : "give a number of seconds, more than 0 and at most 3600"
        }

    public let autoEnqueue = Setting(
        "auto-enqueue", .flag, group: .podcasts, default: Settings.text(Settings.defaults.autoEnqueue), inversion: true,
        summary: "Append each downloaded episode to the queue",
        manual: """
            Append each downloaded episode to the queue.
            """, into: \.autoEnqueue)

    public let downloadLimit = Setting(
        "download-limit", .integer, group: .podcasts, example: "20", value: "N", default: "keep all",
        summary: "Keep at most N downloaded episodes per feed",
        manual: """
            Keep at most N downloaded episodes per feed: beyond N, the oldest ones played to their \
            end are deleted (never the one playing, never one not heard).
            """, into: \.downloadLimit) { $0 >= 1 ? nil : "give a number of episodes, 1 or more" }

    public let minFreeSpace = Setting(
        "min-free-space", .integer, group: .podcasts, value: "BYTES", default: "\(Settings.defaults.minFreeSpace)",
        summary: "Bytes downloads leave free on the disk",
        manual: """
            Downloads stop (and are tried again later) rather than leave the music directory's \
            file system with less than this many bytes free.
            """, into: \.minFreeSpace) { $0 >= 0 ? nil : "give a number of bytes, 0 or more" }

    public let maxDownloadSize = Setting(
        "max-download-size", .integer, group: .podcasts, value: "BYTES", default: "\(Settings.defaults.maxDownloadSize)",
        summary: "The largest episode downloaded, in bytes",
        manual: """
            The largest episode downloaded, in bytes; a larger one fails and leaves no file.
            """, into: \.maxDownloadSize) { $0 > 0 ? nil : "give a number of bytes, more than 0" }

    // MARK: Playback rate and skip silence

    public let rate = Setting(
        "rate", .number, group: .pace, value: "R", default: Settings.text(Settings.defaults.rate),
        summary: "The playback rate, \(PaceSettings.rangeText)",
        manual: """
            The playback rate, from \(PaceSettings.rangeText) (1.5 plays half again as fast); \
            clients change it with the rate command. A saved state's rate wins over it.
            """, into: \.rate) { rate in
            PaceSettings.isSupported(rate) ? nil : "give a rate from \(PaceSettings.rangeText)"
        }

    public let pitchAlgorithm = Setting(
        "pitch-algorithm", .choice(
            fileType: "\"timeDomain\" or \"varispeed\"", PaceSettings.pitchAlgorithm(named:),
            refusal: { "'\($0)' is not a pitch algorithm: give timeDomain or varispeed" }),
        group: .pace, value: "NAME", default: "timeDomain", values: ["timeDomain", "varispeed"],
        summary: "timeDomain (the pitch kept) or varispeed",
        manual: """
            How a rate other than 1 is played: timeDomain keeps the pitch (made for speech), \
            varispeed lets it follow the rate, as a tape played faster. Clients change it with \
            the pitchalgorithm command; a saved state's wins over it.
            """) { algorithm, options throws(SettingProblem) in options.pitchAlgorithm = algorithm }

    public let skipSilence = Setting(
        "skip-silence", .flag, group: .pace, default: Settings.text(Settings.defaults.skipSilence),
        summary: "Shorten quiet stretches of 1 s or more",
        manual: """
            Shorten every stretch quieter than -50 dBFS lasting 1 s or more to 0.3 s. Clients \
            change it with the skipsilence command; a saved state's wins over it.
            """, into: \.skipSilence)

    // MARK: Streams

    public let streamRetryTime = Setting(
        "stream-retry-time", .number, group: .streams, value: "SECONDS", default: Settings.text(Settings.defaults.streamRetryTime),
        summary: "How long a dropped stream is tried again",
        manual: """
            How long a stream (an http:// or https:// item) whose connection dropped or stalled is \
            tried again, in seconds from 0 to 86400, the waits between tries growing from 0.5 s to \
            30 s; then it fails and the queue moves on.
            """, into: \.streamRetryTime) { seconds in
            seconds.isFinite && seconds >= 0 && seconds <= 86_400 ? nil : "give a number of seconds from 0 to 86400"
        }

    public let caFile = Setting(
        "ca-file", .path, group: .streams, example: #""private-ca.pem""#, value: "PATH",
        summary: "PEM certificates to trust for https:// too",
        manual: """
            A file of PEM certificates to trust besides the system's for https:// streams (a \
            station behind a private certificate authority). Read at start: a file that cannot be \
            read, or holds no certificate, is an error.
            """, into: \.caFile)

    // MARK: The web page

    public let httpTokenFile = Setting(
        "http-token-file", .path, group: .web, example: #""~/.config/queueplayerd/token""#, value: "PATH",
        summary: "The token web requests must carry (first line)",
        manual: """
            A file whose first line is the token every web request must carry (at least 16 \
            bytes); required when http binds an address other than loopback.
            """, into: \.httpTokenFile)

    public let http = Setting(
        "http", .string, group: .web, example: #""127.0.0.1:6680""#, value: "[ADDR:]PORT|off", default: "off", values: ["off"],
        summary: "Serve the web page and WebSocket API here",
        manual: """
            Serve the web page and the WebSocket API on [ADDR:]PORT (ADDR 127.0.0.1 when left \
            out), or off. An address other than loopback needs http-token-file.
            """) { text, options throws(SettingProblem) in
                do throws(DaemonOptionError) {
                    options.http = try HTTPListenAddress.parse(text)
                } catch {
                    throw SettingProblem(error.description)
                }
            }

    // MARK: Location

    public let location = Setting(
        "location", .choice(
            fileType: "\"gpsd\", \"gpsd:HOST\" or \"gpsd:HOST:PORT\"", LocationChoice.init(argument:),
            refusal: { "'\($0)' is not a location source: give \"gpsd\", \"gpsd:HOST\" or \"gpsd:HOST:PORT\"" }),
        group: .location, example: #""gpsd""#, value: "gpsd[:HOST[:PORT]]", default: "none",
        bare: (value: "gpsd", accepts: { $0.hasPrefix("gpsd") }), values: ["gpsd", "gpsd:"],
        summary: "Take location updates from gpsd",
        manual: """
            Take location updates from gpsd, at localhost:2947 unless HOST and PORT say otherwise \
            (an IPv6 address in brackets). On the command line the value may be left out.
            """) { choice, options throws(SettingProblem) in options.location = choice }

    public let regions = Setting(
        "regions", .path, group: .location, example: #""~/tour.gpx""#, value: "FILE.gpx",
        summary: "GPX regions to play at; implies --location",
        manual: """
            A GPX file of waypoints to monitor as regions: entering one plays its audio as an \
            announcement. Implies location (gpsd's default address) when that is not given.
            """) { file, options throws(SettingProblem) in
                options.regions = file
                if options.location == nil { options.location = LocationChoice() }
            }

    // MARK: Resume and statistics

    public let resumeRewind = Setting(
        "resume-rewind", .number, group: .resume, value: "SECONDS", default: Settings.text(Settings.defaults.resumeRewind),
        summary: "Seconds to go back when an item resumes",
        manual: """
            A podcast episode, or an item of 10 minutes or more, left before its last 30 seconds \
            keeps its place (the sticker elapsed); play starts it there again, this many seconds \
            earlier (0 to 600).
            """, into: \.resumeRewind) { seconds in
            seconds.isFinite && seconds >= 0 && seconds <= 600 ? nil : "give a number of seconds from 0 to 600"
        }

    public let statistics = Setting(
        "statistics", .string, group: .resume, value: "daemon|client", default: "daemon", values: ["daemon", "client"],
        summary: "Who writes the play statistics stickers",
        manual: """
            daemon: the daemon writes myMPD's statistics stickers (playCount and lastPlayed once an \
            item over 10 seconds has been heard for half its length or 4 minutes; skipCount and \
            lastSkipped when it is left after 10 seconds but before that). client: it leaves them \
            to a client that keeps them (myMPD's own).
            """) { text, options throws(SettingProblem) in
                switch text {
                case "daemon": options.statisticsByDaemon = true
                case "client": options.statisticsByDaemon = false
                default: throw SettingProblem("'\(text)' is not a statistics keeper: give daemon or client")
                }
            }

    // MARK: The schema

    /// The one schema.
    public static let schema = Settings()

    /// The defaults the documents quote: those of ``DaemonOptions``, which a setting left out keeps.
    static let defaults = DaemonOptions()

    /// A number of the documents: `60`, `2.5`.
    static func text(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

    /// A flag's state in the documents.
    static func text(_ flag: Bool) -> String { flag ? "on" : "off" }

    /// Every setting, in the order declared.
    public static let all: [any AnySetting] = Mirror(reflecting: schema).children.compactMap { $0.value as? any AnySetting }

    /// The setting named `name` (its key in the file, its option without the dashes).
    public static func named(_ name: String) -> (any AnySetting)? { byName[name] }

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// What is checked across settings, once each has been checked and applied.
    func checkTogether(_ options: DaemonOptions, _ origin: SettingOrigin) throws(DaemonOptionError) {
        if let address = options.http, !address.isLoopback, options.httpTokenFile == nil {
            throw origin.error(http, "\(address) is reachable from other machines: give \(origin.spelling(httpTokenFile, in: http)) too")
        }
    }

    static func requireDirectory(_ path: String) throws(SettingProblem) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SettingProblem("\(path): no such directory")
        }
    }

    static func permissions(_ text: String) throws(SettingProblem) -> Permission {
        do {
            return try Permission.parse(text)
        } catch {
            throw SettingProblem("\(error.description): give some of read, add, player, control, admin, comma-separated")
        }
    }
}

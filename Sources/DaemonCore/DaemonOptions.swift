import AppLifecycle
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol
import QueuePlayer
import Zeroconf

/// Everything the daemon can be told at start, as plain values: what the command line and the
/// configuration file say, merged and checked by the executable, which then hands them to
/// ``Daemon/run(options:environment:)``.
public struct DaemonOptions: Sendable {
    /// `--media DIR`: its `.mp3` files are queued, sorted by name, replacing a saved queue.
    public var media: String?
    /// `--music-directory DIR`: the library clients add from.
    public var musicDirectory: String?
    /// `--socket PATH`; nil: ``Daemon/defaultSocketPath()``.
    public var socket: String?
    /// `--bind`, in order. The Unix socket is `--socket`'s unless a `--bind` names one; TCP
    /// listeners are these, or `localhost:6600` when no `--bind` is given.
    public var binds: [ListenAddress] = []
    /// `--password`, in order.
    public var passwords: [PasswordSetting] = []
    /// `--default-permissions`; nil: all without a password, none with one (mpd's).
    public var defaultPermissions: Permission?
    /// `--local-permissions` (Unix socket clients); nil: the default permissions.
    public var localPermissions: Permission?
    /// `--output`, in order; empty: `auto`.
    public var outputs: [OutputChoice] = []
    /// `--buffer-time`, milliseconds.
    public var bufferTimeMilliseconds = Daemon.defaultBufferTimeMilliseconds
    /// `--once`.
    public var once = false
    /// `--background-modes`.
    public var backgroundMode: Application.BackgroundMode = .audio
    /// `--background-time`, seconds.
    public var backgroundTime = 180.0
    /// `--no-state`.
    public var noState = false
    /// `--feed`, already checked.
    public var feeds: [URL] = []
    /// `--feed "URL rate=R"`: those feeds' episodes' playback rate.
    public var feedRates: [URL: Double] = [:]
    /// `--fetch-interval`, seconds; nil: `never`.
    public var fetchInterval: Double? = 3600
    /// `--auto-enqueue` / `--no-auto-enqueue`.
    public var autoEnqueue = true
    /// `--download-limit`; nil keeps all.
    public var downloadLimit: Int?
    /// `--min-free-space`, bytes.
    public var minFreeSpace: Int64 = 256 << 20
    /// `--max-download-size`, bytes.
    public var maxDownloadSize: Int64 = 2 << 30
    /// `--fetch-timeout`, seconds.
    public var fetchTimeout = 30.0
    /// `--stream-retry-time`, seconds: how long a stream that dropped is tried again (with
    /// back-off) before it fails and the queue moves on.
    public var streamRetryTime = 300.0
    /// `--replaygain`, `--replaygain-preamp`, `--replaygain-missing-preamp`, `--replaygain-limit`,
    /// `--loudness-target`: each item's own gain.
    public var loudness = LoudnessOptions()
    /// `--ca-file`: PEM certificates trusted besides the system's for https:// items; nil: none.
    public var caFile: String?
    /// `--resume-rewind`, seconds taken off an item's kept place when it resumes.
    public var resumeRewind = 0.0
    /// `--statistics`: whether the daemon writes the play statistics stickers (`daemon`) or leaves them to a client.
    public var statisticsByDaemon = true
    /// `--max-clients`: the most clients served at once (mpd's `max_connections`).
    public var maxClients = 100
    /// `--connection-timeout`, seconds: a client that sends no complete command for this long,
    /// and is not waiting in `idle`, is disconnected (mpd's `connection_timeout`).
    public var connectionTimeout = 60.0
    /// `--zeroconf` / `--no-zeroconf`: publish `_mpd._tcp` through Avahi while a TCP listener is open.
    public var zeroconf = true
    /// `--zeroconf-name`: the service's name, `%h` this machine's name (mpd's `zeroconf_name`).
    public var zeroconfName = ZeroconfService.defaultName
    /// `--http`: where the web page and the WebSocket API are served; nil: `off` (the default).
    public var http: HTTPListenAddress?
    /// `--http-token-file`: the file whose first line is the token; required for a bind other than loopback.
    public var httpTokenFile: String?
    /// `--location`: where fixes come from; nil: no location updates.
    public var location: LocationChoice?
    /// `location` in `--background-modes`: standard location updates go on in the background.
    public var backgroundLocation = false
    /// `--regions FILE.gpx`.
    public var regions: String?
    /// `--sticker-file`: where the sticker database is kept, or off.
    public var stickerFile = StickerFileChoice.besideState
    /// FILE arguments, in order.
    public var files: [String] = []
    /// `--rate R`: the playback rate, 0.5 to 3.0.
    public var rate = 1.0
    /// `--pitch-algorithm timeDomain|varispeed`.
    public var pitchAlgorithm: AudioTimePitchAlgorithm = .timeDomain
    /// `--skip-silence`.
    public var skipSilence = false

    public init() {}
}

/// An option the daemon cannot use (an output that does not open, two FIFOs that disagree):
/// the executable reports it as a usage error.
public struct DaemonOptionError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

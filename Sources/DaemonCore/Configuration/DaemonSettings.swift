import AppLifecycle
import FeedFetch
import Foundation
import MPDProtocol

/// One setting of the daemon: an option of `--help`, and the key of the same name in the
/// configuration file (`buffer-time = 500` is `--buffer-time 500`).
public enum Setting: String, CaseIterable, Sendable {
    case media
    case musicDirectory = "music-directory"
    case socket
    case bind
    case password
    case defaultPermissions = "default-permissions"
    case localPermissions = "local-permissions"
    case output
    case bufferTime = "buffer-time"
    case once
    case backgroundModes = "background-modes"
    case backgroundTime = "background-time"
    case noState = "no-state"
    case feed
    case fetchInterval = "fetch-interval"
    case autoEnqueue = "auto-enqueue"
    case downloadLimit = "download-limit"
    case minFreeSpace = "min-free-space"
    case maxDownloadSize = "max-download-size"
    case fetchTimeout = "fetch-timeout"
    case streamRetryTime = "stream-retry-time"
    case caFile = "ca-file"
    case maxClients = "max-clients"
    case connectionTimeout = "connection-timeout"
    case zeroconf
    case zeroconfName = "zeroconf-name"
    case http
    case httpTokenFile = "http-token-file"
    case location
    case regions
    case stickerFile = "sticker-file"
    /// The FILE arguments.
    case files

    /// How the command line spells it.
    public var option: String { self == .files ? "FILE arguments" : "--\(rawValue)" }
}

/// What the command line or the configuration file says, each setting nil where it says
/// nothing: nil is what lets the command line's settings win over the file's and the file's
/// over the defaults (``DaemonOptions``), which a value equal to the default could not.
public struct DaemonSettings: Sendable, Equatable {
    public var media: String?
    public var musicDirectory: String?
    public var socket: String?
    public var binds: [String]?
    public var passwords: [String]?
    public var defaultPermissions: String?
    public var localPermissions: String?
    public var outputs: [OutputChoice]?
    public var bufferTime: Int?
    public var once: Bool?
    public var backgroundModes: BackgroundModesChoice?
    public var backgroundTime: Double?
    public var noState: Bool?
    public var feeds: [String]?
    public var fetchInterval: FetchIntervalChoice?
    public var autoEnqueue: Bool?
    public var downloadLimit: Int?
    public var minFreeSpace: Int64?
    public var maxDownloadSize: Int64?
    public var fetchTimeout: Double?
    public var streamRetryTime: Double?
    public var caFile: String?
    public var maxClients: Int?
    public var connectionTimeout: Double?
    public var zeroconf: Bool?
    public var zeroconfName: String?
    public var http: String?
    public var httpTokenFile: String?
    public var location: LocationChoice?
    public var regions: String?
    public var stickerFile: StickerFileChoice?
    public var files: [String]?

    public init() {}

    /// The options to run with: these settings (the command line's) over `file`'s, checked.
    ///
    /// What to play is one choice, not three settings: `--media`, `--music-directory` or FILE
    /// arguments on the command line replace all three of the file's, so that `queueplayerd
    /// song.mp3` plays the song even when the file names a music directory.
    ///
    /// Throws ``DaemonOptionError`` for a value out of range, naming the option when it came
    /// from the command line and the file and line when it came from the file.
    public func options(over file: ConfigurationFile?) throws(DaemonOptionError) -> DaemonOptions {
        var merged = self
        var fromFile: [Setting: Int] = [:]
        if let file {
            func fill<Value>(_ field: WritableKeyPath<DaemonSettings, Value?>, _ setting: Setting) {
                guard merged[keyPath: field] == nil, let value = file.settings[keyPath: field] else { return }
                merged[keyPath: field] = value
                fromFile[setting] = file.lines[setting]
            }
            if media == nil, musicDirectory == nil, files == nil {
                fill(\.media, .media)
                fill(\.musicDirectory, .musicDirectory)
                fill(\.files, .files)
            }
            fill(\.socket, .socket)
            fill(\.binds, .bind)
            fill(\.passwords, .password)
            fill(\.defaultPermissions, .defaultPermissions)
            fill(\.localPermissions, .localPermissions)
            fill(\.outputs, .output)
            fill(\.bufferTime, .bufferTime)
            fill(\.once, .once)
            fill(\.backgroundModes, .backgroundModes)
            fill(\.backgroundTime, .backgroundTime)
            fill(\.noState, .noState)
            fill(\.feeds, .feed)
            fill(\.fetchInterval, .fetchInterval)
            fill(\.autoEnqueue, .autoEnqueue)
            fill(\.downloadLimit, .downloadLimit)
            fill(\.minFreeSpace, .minFreeSpace)
            fill(\.maxDownloadSize, .maxDownloadSize)
            fill(\.fetchTimeout, .fetchTimeout)
            fill(\.streamRetryTime, .streamRetryTime)
            fill(\.caFile, .caFile)
            fill(\.maxClients, .maxClients)
            fill(\.connectionTimeout, .connectionTimeout)
            fill(\.zeroconf, .zeroconf)
            fill(\.zeroconfName, .zeroconfName)
            fill(\.http, .http)
            fill(\.httpTokenFile, .httpTokenFile)
            fill(\.location, .location)
            fill(\.regions, .regions)
            fill(\.stickerFile, .stickerFile)
        }
        let origin = SettingOrigin(file: file?.path, lines: fromFile)
        return try merged.checked(origin)
    }

    /// The options these settings give, every value checked; `origin` names where each came from.
    private func checked(_ origin: SettingOrigin) throws(DaemonOptionError) -> DaemonOptions {
        // All three come from one place (``options(over:)``): the command line or the file.
        let playing = [(Setting.media, media != nil), (.musicDirectory, musicDirectory != nil), (.files, files != nil)]
            .filter(\.1).map(\.0)
        if playing.count > 1 {
            // The second of them in the file is the one to report.
            guard let last = playing.max(by: { (origin.lines[$0] ?? 0) < (origin.lines[$1] ?? 0) }), origin.isFile(last) else {
                throw DaemonOptionError("Give one of --media DIR, --music-directory DIR or FILE arguments.")
            }
            throw origin.error(last, "give one of media, music-directory or files")
        }
        for (setting, directory) in [(Setting.media, media), (.musicDirectory, musicDirectory)] {
            guard let directory else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw origin.error(setting, "\(directory): no such directory")
            }
        }
        var options = DaemonOptions()
        options.media = media
        options.musicDirectory = musicDirectory
        options.files = files ?? []
        if let socket {
            guard !socket.isEmpty, socket.utf8.count <= 100 else {
                throw origin.error(.socket, "a socket path must be 1 to 100 bytes long")
            }
            options.socket = socket
        }
        if let binds {
            options.binds = try binds.map { text throws(DaemonOptionError) in
                do throws(DaemonOptionError) {
                    return try ListenAddress.parse(text)
                } catch {
                    throw origin.error(.bind, error.description.hasPrefix("--bind ")
                                       ? String(error.description.dropFirst(7).dropLast()) : error.description)
                }
            }
        }
        if let passwords {
            options.passwords = try passwords.map { text throws(DaemonOptionError) in
                do throws(DaemonOptionError) {
                    return try PasswordSetting.parse(text)
                } catch {
                    throw origin.error(.password, error.description)
                }
            }
        }
        for (setting, text) in [(Setting.defaultPermissions, defaultPermissions), (.localPermissions, localPermissions)] {
            guard let text else { continue }
            let permissions: Permission
            do {
                permissions = try Permission.parse(text)
            } catch {
                throw origin.error(setting, "\(error.description): give some of read, add, player, control, admin, comma-separated")
            }
            if setting == .defaultPermissions { options.defaultPermissions = permissions } else { options.localPermissions = permissions }
        }
        options.outputs = outputs ?? options.outputs
        if let bufferTime {
            let range = Daemon.bufferTimesMilliseconds
            guard range.contains(bufferTime) else {
                throw origin.error(.bufferTime, "give a number of milliseconds from \(range.lowerBound) to \(range.upperBound)")
            }
            options.bufferTimeMilliseconds = bufferTime
        }
        options.once = once ?? options.once
        options.backgroundMode = backgroundModes?.mode ?? options.backgroundMode
        options.backgroundLocation = backgroundModes?.location ?? options.backgroundLocation
        // `--regions` implies `--location` (gpsd's default address).
        options.location = location ?? (regions == nil ? options.location : LocationChoice())
        options.regions = regions ?? options.regions
        if let backgroundTime {
            guard backgroundTime.isFinite, backgroundTime >= 0 else {
                throw origin.error(.backgroundTime, "give a number of seconds, 0 or more")
            }
            options.backgroundTime = backgroundTime
        }
        options.noState = noState ?? options.noState
        if let feeds {
            options.feeds = try feeds.map { url throws(DaemonOptionError) in
                switch FeedSubscriptionList.feedURL(url) {
                case .success(let url): return url
                case .failure(let problem): throw origin.error(.feed, problem.description)
                }
            }
        }
        if let fetchInterval { options.fetchInterval = fetchInterval.seconds }
        options.autoEnqueue = autoEnqueue ?? options.autoEnqueue
        if let downloadLimit {
            guard downloadLimit >= 1 else { throw origin.error(.downloadLimit, "give a number of episodes, 1 or more") }
            options.downloadLimit = downloadLimit
        }
        if let minFreeSpace {
            guard minFreeSpace >= 0 else { throw origin.error(.minFreeSpace, "give a number of bytes, 0 or more") }
            options.minFreeSpace = minFreeSpace
        }
        if let maxDownloadSize {
            guard maxDownloadSize > 0 else { throw origin.error(.maxDownloadSize, "give a number of bytes, more than 0") }
            options.maxDownloadSize = maxDownloadSize
        }
        if let fetchTimeout {
            guard fetchTimeout.isFinite, fetchTimeout > 0, fetchTimeout <= 3600 else {
                throw origin.error(.fetchTimeout, "give a number of seconds, more than 0 and at most 3600")
            }
            options.fetchTimeout = fetchTimeout
        }
        if let streamRetryTime {
            guard streamRetryTime.isFinite, streamRetryTime >= 0, streamRetryTime <= 86_400 else {
                throw origin.error(.streamRetryTime, "give a number of seconds from 0 to 86400")
            }
            options.streamRetryTime = streamRetryTime
        }
        options.caFile = caFile ?? options.caFile
        if let maxClients {
            guard maxClients >= 1 else { throw origin.error(.maxClients, "give a number of clients, 1 or more") }
            options.maxClients = maxClients
        }
        if let connectionTimeout {
            guard connectionTimeout.isFinite, connectionTimeout > 0, connectionTimeout <= 86_400 else {
                throw origin.error(.connectionTimeout, "give a number of seconds, more than 0 and at most 86400")
            }
            options.connectionTimeout = connectionTimeout
        }
        options.zeroconf = zeroconf ?? options.zeroconf
        if let zeroconfName {
            guard !zeroconfName.isEmpty, !zeroconfName.contains(where: \.isNewline) else {
                throw origin.error(.zeroconfName, "give a name of one line (%h: this machine's name)")
            }
            options.zeroconfName = zeroconfName
        }
        if let http {
            let address: HTTPListenAddress?
            do throws(DaemonOptionError) {
                address = try HTTPListenAddress.parse(http)
            } catch {
                throw origin.error(.http, error.description)
            }
            if let address, !address.isLoopback, httpTokenFile == nil {
                let token = origin.isFile(.http) ? "http-token-file" : Setting.httpTokenFile.option + " PATH"
                throw origin.error(.http, "\(address) is reachable from other machines: give \(token) too")
            }
            options.http = address
        }
        options.httpTokenFile = httpTokenFile ?? options.httpTokenFile
        if case .file(let path) = stickerFile, path.isEmpty {
            throw origin.error(.stickerFile, "give a file path or off")
        }
        options.stickerFile = stickerFile ?? options.stickerFile
        return options
    }
}

/// Where each setting came from, for the messages of ``DaemonSettings/options(over:)``: the
/// file's line for those taken from it, the command line for the others.
private struct SettingOrigin {
    let file: String?
    let lines: [Setting: Int]

    func isFile(_ setting: Setting) -> Bool { file != nil && lines[setting] != nil }

    /// `--buffer-time: why.`, or `FILE:LINE: buffer-time: why.` for a value from the file.
    func error(_ setting: Setting, _ problem: String) -> DaemonOptionError {
        guard let file, let line = lines[setting] else { return DaemonOptionError("\(setting.option): \(problem).") }
        return DaemonOptionError("\(file):\(line): \(setting.rawValue): \(problem).")
    }
}

/// `--background-modes`: the `UIBackgroundModes` of the daemon, a comma list of `audio` (playback
/// goes on in the background; without it entering the background pauses) and `location`
/// (standard location updates go on), or `none` alone.
public struct BackgroundModesChoice: Equatable, Sendable, CustomStringConvertible {
    public var audio: Bool
    public var location: Bool

    public init(audio: Bool = true, location: Bool = false) {
        self.audio = audio
        self.location = location
    }

    /// Parses `audio`, `location`, `audio,location` (any order) or `none`.
    public init?(argument: String) {
        let names = argument.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if names == ["none"] {
            self.init(audio: false, location: false)
            return
        }
        guard !names.isEmpty, names.allSatisfy({ $0 == "audio" || $0 == "location" }) else { return nil }
        self.init(audio: names.contains("audio"), location: names.contains("location"))
    }

    /// The audio mode the application has (the only one it knows of).
    public var mode: Application.BackgroundMode { audio ? .audio : .none }

    public var description: String {
        let names = [audio ? "audio" : nil, location ? "location" : nil].compactMap { $0 }
        return names.isEmpty ? "none" : names.joined(separator: ",")
    }

    /// The forms `--help` lists.
    public static let allValueStrings = ["audio", "location", "audio,location", "none"]
}

/// `--fetch-interval`: seconds (more than 0), or `never`.
public enum FetchIntervalChoice: Equatable, Sendable {
    case seconds(Double)
    case never

    /// Parses what `--fetch-interval` (or a string in the configuration file) says.
    public init?(argument: String) {
        if argument == "never" {
            self = .never
        } else if let seconds = Double(argument) {
            self.init(seconds: seconds)
        } else {
            return nil
        }
    }

    /// A number of seconds, finite and more than 0.
    public init?(seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return nil }
        self = .seconds(seconds)
    }

    /// The interval, nil for `never`.
    public var seconds: Double? {
        if case .seconds(let seconds) = self { return seconds }
        return nil
    }

    public var defaultValueDescription: String {
        switch self {
        case .seconds(let seconds): seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        case .never: "never"
        }
    }
}

import FeedFetch
import Foundation
import TOMLKit

/// The configuration file, `$XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml` or `--config PATH`:
/// TOML whose keys are the options of `--help` (``Setting``), read once at start.
///
/// ```toml
/// music-directory = "~/Music"
/// output = ["auto", "fifo:/tmp/snapfifo"]
/// buffer-time = 1000
/// ```
///
/// The file is checked whole before the daemon starts: a syntax error, a key that is no
/// setting (a typo would otherwise be a setting silently not applied) and a value of the wrong
/// type are each a ``ConfigurationFileError`` naming the file and the line. Ranges are checked
/// with the command line's, by ``DaemonSettings/options(over:)``. What is read is bounded: at most
/// ``maximumSize`` bytes, and the keys, dotted parts and nesting ``TOMLOutline`` allows, each
/// beyond its bound an error too (the executable exits with status 64, as for any mistake in the file).
public struct ConfigurationFile: Sendable {
    /// The file, as its messages name it.
    public let path: String
    /// What the file says.
    public let settings: DaemonSettings
    /// The line each setting the file gives starts on.
    public let lines: [Setting: Int]

    /// The largest file read: a file of every setting, with a long list of `files`, is a few kilobytes.
    public static let maximumSize = 1 << 20

    /// `$XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml`, else `~/.config/queueplayerd/queueplayerd.toml`:
    /// beside the feeds file, in the daemon's one configuration directory.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        FeedSubscriptionList.defaultFile(environment: environment).deletingLastPathComponent()
            .appendingPathComponent("queueplayerd.toml").path
    }

    /// Reads the file at `path`, or at ``defaultPath(environment:)`` when `path` is nil.
    ///
    /// Returns nil when the default file does not exist: a daemon needs no file. A file asked
    /// for with `--config` must exist, or the typo in its name would go unnoticed.
    public static func load(path: String?,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationFileError) -> ConfigurationFile? {
        let file = path ?? defaultPath(environment: environment)
        guard FileManager.default.fileExists(atPath: file) else {
            if path == nil { return nil }
            throw ConfigurationFileError(path: file, line: nil, problem: "no such file")
        }
        // A FileHandle, not String(contentsOfFile:), which refuses anything but a regular file:
        // `--config /dev/null` is the way to start without the default file's settings.
        // One byte more than allowed tells a file that is too large, without reading the rest of it.
        guard let handle = FileHandle(forReadingAtPath: file), let data = try? handle.read(upToCount: maximumSize + 1) ?? Data() else {
            throw ConfigurationFileError(path: file, line: nil, problem: "cannot be read")
        }
        try? handle.close()
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigurationFileError(path: file, line: nil, problem: "not UTF-8 text")
        }
        return try ConfigurationFile(path: file, text: text, environment: environment)
    }

    /// Reads `text` as the contents of the file at `path` (which resolves relative paths in it);
    /// `environment`'s `HOME` is what `~` in a path means.
    public init(path: String, text: String,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationFileError) {
        self.path = path
        guard text.utf8.count <= Self.maximumSize else {
            throw ConfigurationFileError(path: path, line: nil, problem: "larger than \(Self.maximumSize >> 20) MiB, which is no configuration file")
        }
        let lines: [String: Int]
        do throws(TOMLOutline.Refusal) {
            lines = try TOMLOutline(text).keyLines
        } catch {
            throw ConfigurationFileError(path: path, line: error.line, problem: error.problem)
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationFileError(path: path, line: error.source.begin.line, problem: error.description)
        } catch {
            throw ConfigurationFileError(path: path, line: nil, problem: "\(error)")
        }
        var reader = ValueReader(path: path, directory: (path as NSString).deletingLastPathComponent, environment: environment)
        var settings = DaemonSettings()
        var found: [Setting: Int] = [:]
        // In the order of the file, so that of two mistakes the first is reported.
        for key in table.keys.sorted(by: { (lines[$0] ?? 0) < (lines[$1] ?? 0) }) {
            guard let value = table[key] else { continue }
            reader.line = lines[key]
            guard let setting = Setting(rawValue: key) else {
                throw reader.error("unknown setting '\(key)'")
            }
            found[setting] = lines[key]
            switch setting {
            case .media: settings.media = try reader.path(value, setting)
            case .musicDirectory: settings.musicDirectory = try reader.path(value, setting)
            case .socket: settings.socket = try reader.path(value, setting)
            case .bind:
                // A relative socket path is beside the file, as every path of the file is.
                settings.binds = try reader.strings(value, setting).map { text in
                    text.hasPrefix("/") || text.hasPrefix("~") || text.hasPrefix(".") ? reader.resolve(text) : text
                }
            case .password: settings.passwords = try reader.strings(value, setting)
            case .defaultPermissions: settings.defaultPermissions = try reader.string(value, setting)
            case .localPermissions: settings.localPermissions = try reader.string(value, setting)
            case .http: settings.http = try reader.string(value, setting)
            case .location:
                let text = try reader.string(value, setting, expected: "\"gpsd\", \"gpsd:HOST\" or \"gpsd:HOST:PORT\"")
                guard let choice = LocationChoice(argument: text) else {
                    throw reader.error("location: '\(text)' is not a location source: give \"gpsd\", \"gpsd:HOST\" or \"gpsd:HOST:PORT\"")
                }
                settings.location = choice
            case .regions: settings.regions = try reader.path(value, setting)
            case .httpTokenFile: settings.httpTokenFile = try reader.path(value, setting)
            case .caFile: settings.caFile = try reader.path(value, setting)
            case .stickerFile:
                // A path is beside the file, as every path of the file is; "off" is no path.
                let text = try reader.string(value, setting, expected: "a file path or \"off\"")
                guard !text.isEmpty else { throw reader.error("sticker-file: give a file path or \"off\"") }
                settings.stickerFile = text == "off" ? .off : .file(try reader.path(value, setting))
            case .files: settings.files = try reader.strings(value, setting).map(reader.resolve)
            case .output:
                settings.outputs = try reader.strings(value, setting).map { text throws(ConfigurationFileError) in
                    guard let output = OutputChoice(argument: text) else {
                        throw reader.error("output: '\(text)' is not an output: give "
                                           + OutputChoice.allValueStrings.joined(separator: ", "))
                    }
                    return output
                }
            case .feed: settings.feeds = try reader.strings(value, setting)
            case .bufferTime: settings.bufferTime = try reader.integer(value, setting)
            case .downloadLimit: settings.downloadLimit = try reader.integer(value, setting)
            case .maxClients: settings.maxClients = try reader.integer(value, setting)
            case .connectionTimeout: settings.connectionTimeout = try reader.number(value, setting)
            case .zeroconf: settings.zeroconf = try reader.boolean(value, setting)
            case .zeroconfName: settings.zeroconfName = try reader.string(value, setting)
            case .minFreeSpace: settings.minFreeSpace = try Int64(reader.integer(value, setting))
            case .maxDownloadSize: settings.maxDownloadSize = try Int64(reader.integer(value, setting))
            case .backgroundTime: settings.backgroundTime = try reader.number(value, setting)
            case .fetchTimeout: settings.fetchTimeout = try reader.number(value, setting)
            case .streamRetryTime: settings.streamRetryTime = try reader.number(value, setting)
            case .once: settings.once = try reader.boolean(value, setting)
            case .noState: settings.noState = try reader.boolean(value, setting)
            case .autoEnqueue: settings.autoEnqueue = try reader.boolean(value, setting)
            case .backgroundModes:
                let text = try reader.string(value, setting, expected: "\"audio\", \"location\", \"audio,location\" or \"none\"")
                guard let modes = BackgroundModesChoice(argument: text) else {
                    throw reader.error("background-modes: '\(text)' is not a list of modes: give \"audio\", \"location\", \"audio,location\" or \"none\"")
                }
                settings.backgroundModes = modes
            case .fetchInterval:
                if value.string == "never" {
                    settings.fetchInterval = .never
                    break
                }
                let seconds = try reader.number(value, setting, expected: "a number of seconds or \"never\"")
                guard let interval = FetchIntervalChoice(seconds: seconds) else {
                    throw reader.error("fetch-interval: give a number of seconds more than 0, or \"never\"")
                }
                settings.fetchInterval = interval
            }
        }
        self.settings = settings
        self.lines = found
    }

    /// The line each top-level key of `text`, a valid document, starts on (``TOMLOutline``:
    /// TOMLKit gives a line for a syntax error but not for the values it parsed, and a wrong key
    /// or value must be reported at its line too); empty for a document the outline refuses.
    static func keyLines(_ text: String) -> [String: Int] {
        (try? TOMLOutline(text).keyLines) ?? [:]
    }
}

/// A configuration file that cannot be used: `FILE:LINE: problem`.
public struct ConfigurationFileError: Error, CustomStringConvertible, Equatable {
    public let path: String
    /// 1-based; nil for a problem with the whole file (it does not exist).
    public let line: Int?
    public let problem: String

    public init(path: String, line: Int?, problem: String) {
        self.path = path
        self.line = line
        self.problem = problem
    }

    public var description: String { "\(path)\(line.map { ":\($0)" } ?? ""): \(problem)" }
}

/// Reads the file's values into the types of ``DaemonSettings``, each mistake an error at the
/// line of the key being read.
private struct ValueReader {
    let path: String
    /// The file's directory, which relative paths in it are relative to.
    let directory: String
    /// Whose `HOME` `~` is.
    let environment: [String: String]
    var line: Int?

    func error(_ problem: String) -> ConfigurationFileError {
        ConfigurationFileError(path: path, line: line, problem: problem)
    }

    /// `buffer-time: expected an integer, found a string`.
    func mismatch(_ setting: Setting, _ value: TOMLValueConvertible, expected: String) -> ConfigurationFileError {
        let found = switch value.type {
        case .string: "a string"
        case .int: "an integer"
        case .double: "a floating-point number"
        case .bool: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
        return error("\(setting.rawValue): expected \(expected), found \(found)")
    }

    func string(_ value: TOMLValueConvertible, _ setting: Setting, expected: String = "a string") throws(ConfigurationFileError) -> String {
        guard let string = value.string else { throw mismatch(setting, value, expected: expected) }
        return string
    }

    /// A list, or one string for a list of one (`output = "null"`).
    func strings(_ value: TOMLValueConvertible, _ setting: Setting) throws(ConfigurationFileError) -> [String] {
        let expected = "a string or an array of strings"
        if let string = value.string { return [string] }
        guard let array = value.array else { throw mismatch(setting, value, expected: expected) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw mismatch(setting, element, expected: expected) }
            strings.append(string)
        }
        return strings
    }

    func integer(_ value: TOMLValueConvertible, _ setting: Setting) throws(ConfigurationFileError) -> Int {
        guard let integer = value.int else { throw mismatch(setting, value, expected: "an integer") }
        return integer
    }

    /// An integer or a floating-point number: `background-time = 60` means 60.0.
    func number(_ value: TOMLValueConvertible, _ setting: Setting, expected: String = "a number") throws(ConfigurationFileError) -> Double {
        guard let number = value.double ?? value.int.map(Double.init) else { throw mismatch(setting, value, expected: expected) }
        return number
    }

    func boolean(_ value: TOMLValueConvertible, _ setting: Setting) throws(ConfigurationFileError) -> Bool {
        guard let boolean = value.bool else { throw mismatch(setting, value, expected: "true or false") }
        return boolean
    }

    func path(_ value: TOMLValueConvertible, _ setting: Setting) throws(ConfigurationFileError) -> String {
        resolve(try string(value, setting))
    }

    /// `~/x` is in the home directory and `x` beside the file: the daemon's working directory,
    /// `/` under systemd, says nothing about where the file's author meant.
    func resolve(_ path: String) -> String {
        if path.hasPrefix("~") { return UserDirectories.expandingTilde(path, environment: environment) }
        // A stream URL among `files` is not a path.
        return path.hasPrefix("/") || path.isEmpty || StreamURL.hasScheme(path) ? path : (directory as NSString).appendingPathComponent(path)
    }
}

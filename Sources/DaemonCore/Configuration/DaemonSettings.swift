import AppLifecycle
import FeedFetch
import Foundation

/// What the command line or the configuration file says: a value for each setting it gives,
/// none for the others. A setting left out is what lets the command line's win over the file's
/// and the file's over the defaults (``DaemonOptions``), which a value equal to the default could not.
public struct DaemonSettings: Sendable {
    /// By the setting's name.
    private(set) var values: [String: any Sendable] = [:]

    public init() {}

    /// The value `setting` was given, if any.
    public subscript<Value>(_ setting: KeyPath<Settings, Setting<Value>>) -> Value? {
        get { values[Settings.schema[keyPath: setting].name] as? Value }
        set { values[Settings.schema[keyPath: setting].name] = newValue }
    }

    /// The value the setting named `name` was given, if any.
    public subscript(name name: String) -> (any Sendable)? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// No setting given.
    public var isEmpty: Bool { values.isEmpty }

    /// The options to run with: these settings (the command line's) over `file`'s, checked.
    ///
    /// Settings that are one choice (``AnySetting/oneOf``: what to play, `--media`,
    /// `--music-directory` or FILE arguments) are replaced together: given on the command line,
    /// any of them replaces all of the file's, so that `queueplayerd song.mp3` plays the song even
    /// when the file names a music directory.
    ///
    /// Throws ``DaemonOptionError`` for a value out of range, naming the option when it came
    /// from the command line and the file and line when it came from the file.
    public func options(over file: ConfigurationFile?) throws(DaemonOptionError) -> DaemonOptions {
        var merged = values
        var lines: [String: Int] = [:]
        if let file {
            let chosen = Set(Settings.all.compactMap { values[$0.name] == nil ? nil : $0.oneOf })
            for setting in Settings.all where merged[setting.name] == nil {
                if let choice = setting.oneOf, chosen.contains(choice) { continue }
                guard let value = file.settings.values[setting.name] else { continue }
                merged[setting.name] = value
                lines[setting.name] = file.lines[setting.name]
            }
        }
        let origin = SettingOrigin(file: file?.path, lines: lines)
        for choice in Set(Settings.all.compactMap(\.oneOf)).sorted() {
            let members = Settings.all.filter { $0.oneOf == choice }
            let given = members.filter { merged[$0.name] != nil }
            guard given.count > 1 else { continue }
            // All of them come from one place, the command line or the file; in the file, the
            // second of them is the one to report.
            guard let last = given.max(by: { (lines[$0.name] ?? 0) < (lines[$1.name] ?? 0) }), origin.isFile(last) else {
                throw DaemonOptionError("Give one of \(Self.list(members.map(\.optionWithValue))).")
            }
            throw origin.error(last, "give one of \(Self.list(members.map(\.name)))")
        }
        var options = DaemonOptions()
        for setting in Settings.all {
            guard let value = merged[setting.name] else { continue }
            do throws(SettingProblem) {
                try setting.apply(value, to: &options)
            } catch {
                throw origin.error(setting, error.text)
            }
        }
        try Settings.schema.checkTogether(options, origin)
        return options
    }

    /// `a, b or c`.
    static func list(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items[items.count - 1]
    }
}

/// Where each setting came from, for the messages of ``DaemonSettings/options(over:)``: the
/// file's line for those taken from it, the command line for the others.
struct SettingOrigin {
    let file: String?
    let lines: [String: Int]

    func isFile(_ setting: any AnySetting) -> Bool { file != nil && lines[setting.name] != nil }

    /// `--buffer-time: why.`, or `FILE:LINE: buffer-time: why.` for a value from the file.
    func error(_ setting: any AnySetting, _ problem: String) -> DaemonOptionError {
        guard let file, let line = lines[setting.name] else { return DaemonOptionError("\(setting.option): \(problem).") }
        return DaemonOptionError("\(file):\(line): \(setting.name): \(problem).")
    }

    /// How a message about `current` names `other`: as the file's key when `current` came from
    /// the file, as the option (with its value) otherwise.
    func spelling(_ other: any AnySetting, in current: any AnySetting) -> String {
        isFile(current) ? other.name : other.optionWithValue
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

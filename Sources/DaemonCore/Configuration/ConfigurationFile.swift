import FeedFetch
import Foundation
import TOMLKit

/// The configuration file, `$XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml` or `--config PATH`:
/// TOML whose keys are the settings' names (``Settings``), the options of `--help` without their dashes, read once at start.
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
    /// The line each setting the file gives starts on, by its name.
    public let lines: [String: Int]

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
        let reader = SettingFileReader(directory: (path as NSString).deletingLastPathComponent, environment: environment)
        var settings = DaemonSettings()
        var found: [String: Int] = [:]
        // In the order of the file, so that of two mistakes the first is reported.
        for key in table.keys.sorted(by: { (lines[$0] ?? 0) < (lines[$1] ?? 0) }) {
            guard let value = table[key] else { continue }
            guard let setting = Settings.named(key) else {
                throw ConfigurationFileError(path: path, line: lines[key], problem: "unknown setting '\(key)'")
            }
            do throws(SettingProblem) {
                settings[name: key] = try setting.read(value, reader)
            } catch {
                throw ConfigurationFileError(path: path, line: lines[key], problem: "\(key): \(error.text)")
            }
            found[key] = lines[key]
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

/// Reads the file's values into the types of the settings (``SettingKind``); a mistake is a
/// ``SettingProblem`` that the file puts its line and the key in front of.
public struct SettingFileReader: Sendable {
    /// The file's directory, which relative paths in it are relative to.
    let directory: String
    /// Whose `HOME` `~` is.
    let environment: [String: String]

    /// `expected an integer, found a string`.
    func mismatch(_ value: TOMLValueConvertible, expected: String) -> SettingProblem {
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
        return SettingProblem("expected \(expected), found \(found)")
    }

    func string(_ value: TOMLValueConvertible, expected: String = "a string") throws(SettingProblem) -> String {
        guard let string = value.string else { throw mismatch(value, expected: expected) }
        return string
    }

    /// A list, or one string for a list of one (`output = "null"`).
    func strings(_ value: TOMLValueConvertible) throws(SettingProblem) -> [String] {
        let expected = "a string or an array of strings"
        if let string = value.string { return [string] }
        guard let array = value.array else { throw mismatch(value, expected: expected) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw mismatch(element, expected: expected) }
            strings.append(string)
        }
        return strings
    }

    func integer(_ value: TOMLValueConvertible) throws(SettingProblem) -> Int {
        guard let integer = value.int else { throw mismatch(value, expected: "an integer") }
        return integer
    }

    /// An integer or a floating-point number: `background-time = 60` means 60.0.
    func number(_ value: TOMLValueConvertible, expected: String = "a number") throws(SettingProblem) -> Double {
        guard let number = value.double ?? value.int.map(Double.init) else { throw mismatch(value, expected: expected) }
        return number
    }

    func boolean(_ value: TOMLValueConvertible) throws(SettingProblem) -> Bool {
        guard let boolean = value.bool else { throw mismatch(value, expected: "true or false") }
        return boolean
    }

    /// `~/x` is in the home directory and `x` beside the file: the daemon's working directory,
    /// `/` under systemd, says nothing about where the file's author meant.
    func resolve(_ path: String) -> String {
        if path.hasPrefix("~") { return UserDirectories.expandingTilde(path, environment: environment) }
        // A stream URL among `files` is not a path.
        return path.hasPrefix("/") || path.isEmpty || StreamURL.hasScheme(path) ? path : (directory as NSString).appendingPathComponent(path)
    }
}

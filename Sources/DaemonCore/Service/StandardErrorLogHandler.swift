#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
#if canImport(Glibc)
import Glibc
#endif
#if canImport(CDispatch)
// For Glibc's `stat`/`timespec` fields under MemberImportVisibility (Package.swift says why).
import CDispatch
#endif

/// The daemon's swift-log handler: one line per message on stderr, written
/// through ``Console`` so it never runs into the terminal status line.
///
/// Connected to the journal (`$JOURNAL_STREAM` names stderr), each line starts
/// with the `sd-daemon(3)` priority prefix (`<3>` error, `<4>` warning, `<6>` info,
/// ...), so journald records the level and adds the time and the unit itself.
/// Elsewhere lines read `2026-11-23T01:02:03+0000 warning queueplayerd: text`.
package struct StandardErrorLogHandler: LogHandler {
    enum Format: Sendable {
        /// `<N>text`, for journald.
        case journal
        /// Time, level and label before the text, for a terminal or a file.
        case plain
    }

    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    let format: Format
    /// The logger's label (`queueplayerd`, or a library's), printed in the plain format.
    let label: String
    /// Where the lines go: stderr, or a test's record of a daemon inside the test process.
    var write: @Sendable (String) -> Void = { Console.error($0) }

    init(label: String, format: Format, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.format = format
        self.metadataProvider = metadataProvider
    }

    /// The factory of the handlers for `LoggingSystem.bootstrap`: each in the journal's format if
    /// stderr is the journal, at the level `$QUEUEPLAYERD_LOG_LEVEL` names (info if none).
    ///
    /// Both are read from `environment` once, here, not for each logger: every `Logger` any
    /// module makes calls the factory, and `ProcessInfo.processInfo.environment` builds a new
    /// dictionary at each call, and a launch would build it once per logger, a noticeable part
    /// of its work. The daemon hands it the
    /// environment start-up read (`QueuePlayerDaemon.run`).
    package static func factory(environment: [String: String]) -> @Sendable (String) -> StandardErrorLogHandler {
        let format: Format = isStandardErrorTheJournal(environment: environment) ? .journal : .plain
        let level = environment["QUEUEPLAYERD_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        return { label in
            var handler = StandardErrorLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// True if `$JOURNAL_STREAM` (`<device>:<inode>`) is the file open on stderr; a child
    /// whose stderr was redirected elsewhere inherits the variable, so it is checked.
    static func isStandardErrorTheJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    static func prefix(for level: Logger.Level) -> String {
        switch level {
        case .critical: "<2>"
        case .error: "<3>"
        case .warning: "<4>"
        case .notice: "<5>"
        case .info: "<6>"
        case .debug, .trace: "<7>"
        }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit = event.metadata { merged.merge(explicit) { $1 } }
        var text = event.message.description
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        let prefix: String
        switch format {
        case .journal: prefix = Self.prefix(for: event.level)
        case .plain: prefix = "\(Self.timestamp()) \(event.level) \(label): "
        }
        // journald reads each line on its own: every line gets the prefix.
        var output = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            output += prefix + line + "\n"
        }
        write(output)
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler for stderr connected to the journal: each line starts with the
/// `sd-daemon(3)` priority prefix (`<2>` critical, `<3>` error, `<4>` warning, `<5>` notice,
/// `<6>` info, `<7>` debug and trace), so journald records the level; the journal adds the
/// time, the unit and the process itself.
struct JournalLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let label: String

    init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The handler for `label`: a journal handler when stderr is the journal stream
    /// systemd connected (`$JOURNAL_STREAM` names stderr's device and inode), else
    /// swift-log's usual stderr format.
    static func standardError(label: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> any LogHandler {
        if isStandardErrorTheJournal(environment: environment) {
            return JournalLogHandler(label: label)
        }
        return StreamLogHandler.standardError(label: label)
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

    func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?,
             source: String, file: String, function: String, line: UInt) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let explicit { merged.merge(explicit) { $1 } }
        var text = message.description
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // journald reads each line on its own: every line gets the prefix.
        let prefix = Self.prefix(for: level)
        var output = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            output += prefix + line + "\n"
        }
        Self.write(output)
    }

    private static let writeLock = Mutex<Void>(())

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        writeLock.withLock { _ in
            bytes.withUnsafeMutableBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                    if written <= 0 { if errno == EINTR { continue } else { return } }
                    offset += written
                }
            }
        }
    }
}

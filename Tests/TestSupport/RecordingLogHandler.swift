import Logging
import Synchronization

/// A log handler that keeps every line (`LEVEL: message`): what the code under test told
/// the log, and what it never must (a password, a token).
public struct RecordingLogHandler: LogHandler {
    /// The lines kept, shared by the handler's copies (swift-log copies handlers).
    public final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        public init() {}
        public var all: [String] { lines.withLock { $0 } }
        public func append(_ line: String) { lines.withLock { $0.append(line) } }
        public func count(containing text: String) -> Int { all.filter { $0.contains(text) }.count }
        /// A logger whose lines are kept here.
        public func logger(label: String = "test") -> Logger {
            Logger(label: label) { _ in RecordingLogHandler(lines: self) }
        }
    }

    public let lines: Lines
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(lines: Lines) {
        self.lines = lines
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        lines.append("\(event.level): \(event.message)")
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
@testable import DaemonCore

/// The daemon's log handlers, as `LoggingSystem.bootstrap` gets them: the level and the format
/// decided once, from one reading of the environment (``StandardErrorLogHandler/factory(environment:)``).
@Suite struct StandardErrorLogHandlerFactoryTests {
    @Test func theLevelIsQueueplayerdLogLevelsElseInfo() {
        #expect(StandardErrorLogHandler.factory(environment: ["QUEUEPLAYERD_LOG_LEVEL": "debug"])("a").logLevel == .debug)
        #expect(StandardErrorLogHandler.factory(environment: ["QUEUEPLAYERD_LOG_LEVEL": "error"])("a").logLevel == .error)
        #expect(StandardErrorLogHandler.factory(environment: [:])("a").logLevel == .info)
        #expect(StandardErrorLogHandler.factory(environment: ["QUEUEPLAYERD_LOG_LEVEL": "loud"])("a").logLevel == .info,
                "a level swift-log does not know")
    }

    @Test func theJournalsFormatOnlyWhenJournalStreamNamesStandardError() throws {
        var info = stat()
        try #require(fstat(STDERR_FILENO, &info) == 0)
        let stream = "\(info.st_dev):\(info.st_ino)"
        #expect(StandardErrorLogHandler.factory(environment: ["JOURNAL_STREAM": stream])("a").format == .journal)
        // The test's stderr is not the file 1:2.
        #expect(StandardErrorLogHandler.factory(environment: ["JOURNAL_STREAM": "1:2"])("a").format == .plain)
        #expect(StandardErrorLogHandler.factory(environment: [:])("a").format == .plain)
    }

    @Test func everyLoggerGetsTheSameLevelAndItsOwnLabel() {
        let factory = StandardErrorLogHandler.factory(environment: ["QUEUEPLAYERD_LOG_LEVEL": "trace"])
        let (first, second) = (factory("queueplayerd"), factory("nio"))
        #expect(first.logLevel == .trace && second.logLevel == .trace)
        #expect(first.label == "queueplayerd" && second.label == "nio")
    }
}

import Testing
import TestSupport
@testable import DaemonCore
@testable import Zeroconf

/// libavahi-client is looked up when the daemon first publishes, not linked (``AvahiLibrary``).
@Suite struct AvahiLibraryTests {
    @Test func theInstalledLibraryHasEveryFunctionThePublisherCalls() throws {
        let library = try AvahiLibrary.load(AvahiLibrary.fileName).get()
        // A call that needs no Avahi daemon: the library's own words for an error code.
        let text = try #require(library.strerror(-1))
        #expect(String(cString: text) == "Operation failed")
    }

    @Test func aLibraryThatIsNotThereIsAnErrorThatNamesIt() throws {
        let error = try #require(Self.error(loading: "libavahi-client-missing.so.3"), "a missing library loaded")
        #expect(error.description.contains("libavahi-client-missing.so.3"), "\(error)")
    }

    @Test func aLibraryWithoutTheFunctionsIsAnErrorThatNamesTheFirstMissing() throws {
        // libc is there, and has none of them.
        let error = try #require(Self.error(loading: "libc.so.6"), "libc passed for libavahi-client")
        #expect(error.description.contains("avahi_threaded_poll_new"), "\(error)")
    }

    private static func error(loading fileName: String) -> AvahiLibrary.LoadError? {
        guard case .failure(let error) = AvahiLibrary.load(fileName) else { return nil }
        return error
    }
}

/// The daemon without libavahi-client3: the publication says why in one warning, and stopping
/// it is as quick as ever.
@Suite struct AvahiPublisherWithoutTheLibraryTests {
    @Test func aMissingLibraryIsOneWarningAndNothingElse() async throws {
        let log = RecordingLogHandler.Lines()
        let publisher = AvahiPublisher(logger: log.logger()) { AvahiLibrary.load("libavahi-client-missing.so.3") }
        publisher.start(try #require(ZeroconfService(name: "qp", listeners: [(6600, true)])))
        #expect(waitUntil(timeout: 10) { !log.all.isEmpty }, "nothing logged")
        await publisher.stop()
        #expect(log.all.count == 1, "\(log.all)")
        #expect(log.all.first?.hasPrefix("warning: zeroconf: ") == true, "\(log.all)")
        #expect(log.all.first?.contains("libavahi-client-missing.so.3") == true, "\(log.all)")
        #expect(log.all.first?.hasSuffix("_mpd._tcp is not published") == true, "\(log.all)")
    }
}

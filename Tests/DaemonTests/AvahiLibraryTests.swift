import Testing
@testable import DaemonCore

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

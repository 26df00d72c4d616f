import CAvahi
#if canImport(Glibc)
import Glibc
#endif

/// The libavahi-client functions ``AvahiPublisher`` calls, looked up in the library when the
/// daemon first publishes (`dlopen`), not linked into the executable.
///
/// Why not linked: libavahi-client brings libdbus, and libdbus libsystemd with libgcrypt,
/// libzstd, liblz4, libcap and libgpg-error: nine libraries the loader mapped and relocated
/// before `main` at every launch, for a publication that starts only once the control socket
/// listens, and never with `--no-zeroconf`: without them a launch, and `queueplayerd --help`,
/// is shorter and maps less. Launch → first frame gains less: the library is still loaded right
/// after the socket listens, while the first frame is made, and where ALSA's pulse plugin is
/// installed it loads libdbus and libsystemd with libpulse anyway. Loaded here, a machine
/// without libavahi-client3 runs the daemon as ever, without Zeroconf (a warning says so).
///
/// The types still come from the headers (`CAvahi`, which links nothing): each field's type is
/// the one Swift imports for the function of that name.
struct AvahiLibrary: Sendable {
    let threadedPollNew: @convention(c) () -> OpaquePointer?
    let threadedPollFree: @convention(c) (OpaquePointer?) -> Void
    let threadedPollGet: @convention(c) (OpaquePointer?) -> UnsafePointer<AvahiPoll>?
    let threadedPollStart: @convention(c) (OpaquePointer?) -> Int32
    let threadedPollStop: @convention(c) (OpaquePointer?) -> Int32
    let threadedPollQuit: @convention(c) (OpaquePointer?) -> Void
    let clientNew: @convention(c) (UnsafePointer<AvahiPoll>?, AvahiClientFlags, AvahiClientCallback?,
                                   UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> OpaquePointer?
    let clientFree: @convention(c) (OpaquePointer?) -> Void
    let clientErrno: @convention(c) (OpaquePointer?) -> Int32
    let entryGroupNew: @convention(c) (OpaquePointer?, AvahiEntryGroupCallback?, UnsafeMutableRawPointer?) -> OpaquePointer?
    let entryGroupFree: @convention(c) (OpaquePointer?) -> Int32
    let entryGroupCommit: @convention(c) (OpaquePointer?) -> Int32
    let entryGroupReset: @convention(c) (OpaquePointer?) -> Int32
    let entryGroupIsEmpty: @convention(c) (OpaquePointer?) -> Int32
    let entryGroupGetClient: @convention(c) (OpaquePointer?) -> OpaquePointer?
    let entryGroupAddServiceStrlst: @convention(c) (OpaquePointer?, AvahiIfIndex, AvahiProtocol, AvahiPublishFlags,
                                                    UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                                    UnsafePointer<CChar>?, UInt16, UnsafeMutablePointer<AvahiStringList>?) -> Int32
    let alternativeServiceName: @convention(c) (UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// The library's file name (its soname: Debian's libavahi-client3).
    static let fileName = "libavahi-client.so.3"

    /// The library, loaded at the first use of this property (once per process, on whichever
    /// thread asks first: Swift initialises a static once): the functions, or why not.
    static let loaded: Result<AvahiLibrary, LoadError> = load(fileName)

    /// Why the library is not there: `dlopen`'s or `dlsym`'s own words.
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens `fileName` and looks up every function; on any failure the library is closed
    /// again. Internal so that a test can load a library that is not there.
    static func load(_ fileName: String) -> Result<AvahiLibrary, LoadError> {
        // Its dependencies (libavahi-common, libdbus) are loaded with it, and a handle's
        // lookups search them too: the threaded poll and the strings are libavahi-common's.
        guard let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LoadError(description: dlerror().map { String(cString: $0) } ?? "\(fileName) cannot be loaded"))
        }
        func function<Function>(_ name: String) throws(LoadError) -> Function {
            guard let address = dlsym(handle, name) else {
                throw LoadError(description: dlerror().map { String(cString: $0) } ?? "\(name) is not in \(fileName)")
            }
            return unsafeBitCast(address, to: Function.self)
        }
        do throws(LoadError) {
            return .success(AvahiLibrary(
                threadedPollNew: try function("avahi_threaded_poll_new"),
                threadedPollFree: try function("avahi_threaded_poll_free"),
                threadedPollGet: try function("avahi_threaded_poll_get"),
                threadedPollStart: try function("avahi_threaded_poll_start"),
                threadedPollStop: try function("avahi_threaded_poll_stop"),
                threadedPollQuit: try function("avahi_threaded_poll_quit"),
                clientNew: try function("avahi_client_new"),
                clientFree: try function("avahi_client_free"),
                clientErrno: try function("avahi_client_errno"),
                entryGroupNew: try function("avahi_entry_group_new"),
                entryGroupFree: try function("avahi_entry_group_free"),
                entryGroupCommit: try function("avahi_entry_group_commit"),
                entryGroupReset: try function("avahi_entry_group_reset"),
                entryGroupIsEmpty: try function("avahi_entry_group_is_empty"),
                entryGroupGetClient: try function("avahi_entry_group_get_client"),
                entryGroupAddServiceStrlst: try function("avahi_entry_group_add_service_strlst"),
                alternativeServiceName: try function("avahi_alternative_service_name"),
                free: try function("avahi_free"),
                strerror: try function("avahi_strerror")))
        } catch {
            dlclose(handle)
            return .failure(error)
        }
    }
}

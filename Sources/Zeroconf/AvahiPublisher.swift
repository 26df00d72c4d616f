import CAvahi
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Synchronization

/// Publishes one ``ZeroconfService`` through the Avahi daemon (libavahi-client, which speaks
/// to it over the D-Bus system bus; `DBUS_SYSTEM_BUS_ADDRESS` moves that bus) for as long
/// as it runs, as mpd's Avahi glue does:
/// * Avahi not running: one debug line, and the client waits for it (`AVAHI_CLIENT_NO_FAIL`),
///   publishing once it appears; no system bus at all: one debug line, and nothing more.
/// * Avahi going away (restarted, upgraded): the client is made again and waits, and the
///   service is published again when Avahi is back.
/// * The name taken by another service of the network: Avahi's alternative (`NAME #2`),
///   logged; a change of this host's name: the service is withdrawn while Avahi registers it,
///   then published again.
/// * ``stop()``: the service is withdrawn (Avahi sends its goodbye) before the listener closes.
/// * libavahi-client not installed: one warning, and the daemon runs without Zeroconf (the
///   library is loaded when the publication starts, ``AvahiLibrary``, not linked).
///
/// Threading: libavahi-client runs on Avahi's threaded poll (`avahi_threaded_poll`: one thread
/// of its own while the daemon runs), never on the NIO event loop or the Swift concurrency
/// pool. Its callbacks (the client's and the entry group's states) run there, holding the
/// poll's lock, and make every libavahi call but the first and the last: ``start(_:)`` loads
/// the library and starts the poll on a queue of its own, and hands the creation of the client
/// to the poll's thread (a timeout due at once), so that `avahi_client_new`'s D-Bus round
/// trips wait on it; ``stop()`` joins that thread before it frees anything, on the same queue.
/// The Swift side's state is one `Mutex`, taken briefly inside the poll's lock (never the other
/// way round) and never across a libavahi call, which may call back. C types do not leave
/// this file and ``AvahiLibrary``.
package final class AvahiPublisher: Sendable {
    private struct State {
        /// Nil until ``start(_:)``.
        var service: ZeroconfService?
        /// `AvahiThreadedPoll *`: set before its thread starts, cleared by ``stop()``.
        var poll: AvahiObject?
        /// `AvahiClient *` and `AvahiEntryGroup *`: the poll thread's (or ``stop()``'s once it is joined).
        var client: AvahiObject?
        var group: AvahiObject?
        /// Whether Avahi has the service registered (its group `ESTABLISHED`).
        var isEstablished = false
    }

    /// A libavahi object by its address. The object is the poll lock's, not the state's: here
    /// it is only a number, turned back into a pointer where that lock is held (or the poll's
    /// thread is joined).
    private struct AvahiObject: Sendable {
        private let address: UInt
        init(_ pointer: OpaquePointer) { address = UInt(bitPattern: pointer) }
        var pointer: OpaquePointer { OpaquePointer(bitPattern: address)! }
    }

    private let state: Mutex<State>
    private let logger: Logger
    /// libavahi-client, loaded at the first call (``AvahiLibrary/loaded``; a test gives another).
    private let library: @Sendable () -> Result<AvahiLibrary, AvahiLibrary.LoadError>
    /// Starts and stops the publication: loading the library, starting the poll's thread and
    /// joining it are never done on the caller's thread (the daemon's start-up task).
    private let queue = DispatchQueue(label: "queueplayerd.zeroconf")

    package init(logger: Logger, library: @escaping @Sendable () -> Result<AvahiLibrary, AvahiLibrary.LoadError> = { AvahiLibrary.loaded }) {
        state = Mutex(State())
        self.logger = logger
        self.library = library
    }

    /// The service's name now (Avahi's alternative after a collision).
    package var name: String { state.withLock { $0.service?.name ?? "" } }

    /// libavahi-client, which ``start(_:)`` loaded before it made anything that calls back or
    /// needs freeing: every other use comes after that.
    private var avahi: AvahiLibrary {
        guard case .success(let loaded) = library() else {
            preconditionFailure("libavahi-client used before AvahiPublisher.start loaded it")
        }
        return loaded
    }

    /// Loads libavahi-client and starts Avahi's thread, which connects to the Avahi daemon and
    /// publishes `service`, on the publisher's queue. Returns at once. Once only.
    package func start(_ service: ZeroconfService) {
        guard state.withLock({ state in
            defer { state.service = state.service ?? service }
            return state.service == nil
        }) else { return }
        queue.async { [self] in startPoll() }
    }

    /// On the publisher's queue: the library, the poll, the client's creation handed to it.
    private func startPoll() {
        let avahi: AvahiLibrary
        switch library() {
        case .success(let library):
            avahi = library
        case .failure(let error):
            logger.warning("zeroconf: \(error): \(ZeroconfService.type) is not published")
            return
        }
        guard let poll = avahi.threadedPollNew(), let api = avahi.threadedPollGet(poll) else {
            logger.warning("zeroconf: Avahi's event loop cannot be made: \(ZeroconfService.type) is not published")
            return
        }
        var now = timeval()
        gettimeofday(&now, nil)
        // Due at once, on the poll's thread: the client is made there. (Avahi frees it with the poll.)
        _ = api.pointee.timeout_new(api, &now, { _, userdata in
            AvahiPublisher.from(userdata).connect()
        }, Unmanaged.passUnretained(self).toOpaque())
        state.withLock { $0.poll = AvahiObject(poll) }
        if avahi.threadedPollStart(poll) < 0 {
            logger.warning("zeroconf: Avahi's thread cannot start: \(ZeroconfService.type) is not published")
            state.withLock { $0.poll = nil }
            avahi.threadedPollFree(poll)
        }
    }

    /// Withdraws the service and ends Avahi's thread; returns once the Avahi daemon has
    /// taken the withdrawal (a D-Bus call), without blocking the caller's thread.
    package func stop() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                if let poll = state.withLock({ $0.poll })?.pointer {
                    // Joins the thread: no callback runs from here on, so the pointers are ours.
                    let avahi = avahi
                    _ = avahi.threadedPollStop(poll)
                    let (client, group, wasEstablished) = state.withLock { state in
                        defer { (state.poll, state.client, state.group, state.isEstablished) = (nil, nil, nil, false) }
                        return (state.client?.pointer, state.group?.pointer, state.isEstablished)
                    }
                    if let group {
                        _ = avahi.entryGroupFree(group)
                        if wasEstablished { logger.info("zeroconf: \"\(name)\" withdrawn") }
                    }
                    if let client { avahi.clientFree(client) }
                    avahi.threadedPollFree(poll)
                }
                done.resume()
            }
        }
    }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> AvahiPublisher {
        Unmanaged<AvahiPublisher>.fromOpaque(userdata!).takeUnretainedValue()
    }

    // MARK: On the poll's thread

    /// Makes the client; it calls ``clientChanged(_:_:)`` at once, and at every change.
    private func connect() {
        guard let poll = state.withLock({ $0.poll })?.pointer else { return }
        var error: Int32 = 0
        let avahi = avahi
        let client = avahi.clientNew(avahi.threadedPollGet(poll), AVAHI_CLIENT_NO_FAIL, { client, clientState, userdata in
            guard let client else { return }
            AvahiPublisher.from(userdata).clientChanged(client, clientState)
        }, Unmanaged.passUnretained(self).toOpaque(), &error)
        guard let client else {
            // No system bus: nothing to wait for. The thread ends (``stop()`` joins it).
            logger.debug("zeroconf: Avahi cannot be reached (\(describe(error))): \(ZeroconfService.type) is not published")
            avahi.threadedPollQuit(poll)
            return
        }
        state.withLock { $0.client = AvahiObject(client) }
    }

    private func clientChanged(_ client: OpaquePointer, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            publish(with: client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // This host's name is being registered (again): the service waits until it is.
            let group = state.withLock { state -> AvahiObject? in
                state.isEstablished = false
                return state.group
            }
            if let group { _ = avahi.entryGroupReset(group.pointer) }
        case AVAHI_CLIENT_CONNECTING:
            logger.debug("zeroconf: Avahi is not running; \(ZeroconfService.type) is published when it starts")
        case AVAHI_CLIENT_FAILURE:
            let error = avahi.clientErrno(client)
            guard error == AVAHI_ERR_DISCONNECTED else {
                logger.warning("zeroconf: Avahi failed (\(describe(error))): \(ZeroconfService.type) is not published")
                return
            }
            // The daemon went away: a new client waits for it (freeing the old one frees its group).
            logger.info("zeroconf: Avahi went away; \"\(name)\" is published again when it is back")
            state.withLock { ($0.client, $0.group, $0.isEstablished) = (nil, nil, false) }
            avahi.clientFree(client)
            connect()
        default:
            break
        }
    }

    /// Adds the service to the entry group (made on first use) and commits it, unless it is there.
    private func publish(with client: OpaquePointer) {
        if let group = state.withLock({ $0.group })?.pointer {
            if avahi.entryGroupIsEmpty(group) != 0 { add(to: group) }
            return
        }
        guard let group = avahi.entryGroupNew(client, { group, groupState, userdata in
            guard let group else { return }
            AvahiPublisher.from(userdata).groupChanged(group, groupState)
        }, Unmanaged.passUnretained(self).toOpaque()) else {
            logger.warning("zeroconf: \(describe(avahi.clientErrno(client))): \(ZeroconfService.type) is not published")
            return
        }
        state.withLock { $0.group = AvahiObject(group) }
        add(to: group)
    }

    /// Adds the service and commits it; a name this Avahi already has is replaced by its
    /// alternative (at most `renames` times: a name never free is given up, logged).
    private func add(to group: OpaquePointer, renames: Int = 16) {
        guard let service = state.withLock({ $0.service }) else { return }
        var interface = AvahiIfIndex(AVAHI_IF_UNSPEC)
        if service.isLoopbackOnly {
            interface = AvahiIfIndex(if_nametoindex("lo"))
            guard interface > 0 else {
                logger.debug("zeroconf: no loopback interface: \(ZeroconfService.type) on port \(service.port) (loopback only) is not published")
                return
            }
        }
        let avahi = avahi
        let added = avahi.entryGroupAddServiceStrlst(group, interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                                                         service.name, ZeroconfService.type, nil, nil, UInt16(service.port), nil)
        if added == AVAHI_ERR_COLLISION && renames > 0 {
            // Taken by another service of this machine's Avahi: whatever went in goes, and again.
            rename()
            _ = avahi.entryGroupReset(group)
            return add(to: group, renames: renames - 1)
        }
        guard added >= 0 else {
            logger.warning("zeroconf: \"\(service.name)\" cannot be published: \(describe(added))")
            return
        }
        let committed = avahi.entryGroupCommit(group)
        if committed < 0 {
            logger.warning("zeroconf: \"\(service.name)\" cannot be published: \(describe(committed))")
        }
    }

    private func groupChanged(_ group: OpaquePointer, _ groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            guard let service = state.withLock({ state -> ZeroconfService? in
                state.isEstablished = true
                return state.service
            }) else { return }
            logger.info("zeroconf: published \"\(service.name)\" (\(ZeroconfService.type), port \(service.port)\(service.isLoopbackOnly ? ", on the loopback interface: the listener is loopback only" : ""))")
        case AVAHI_ENTRY_GROUP_COLLISION:
            state.withLock { $0.isEstablished = false }
            rename()
            _ = avahi.entryGroupReset(group)
            add(to: group)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let error = avahi.clientErrno(avahi.entryGroupGetClient(group))
            logger.warning("zeroconf: \"\(name)\" could not be published: \(describe(error))")
        default:
            break
        }
    }

    /// Takes Avahi's alternative to a name that is taken (`NAME` → `NAME #2` → `NAME #3`).
    private func rename() {
        let old = name
        guard let alternative = avahi.alternativeServiceName(old) else { return }
        let new = String(cString: alternative)
        avahi.free(alternative)
        state.withLock { $0.service?.name = new }
        logger.notice("zeroconf: the name \"\(old)\" is taken on the network; publishing as \"\(new)\"")
    }

    private func describe(_ error: Int32) -> String {
        avahi.strerror(error).map { String(cString: $0) } ?? "error \(error)"
    }
}

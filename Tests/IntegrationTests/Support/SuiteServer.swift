import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A server a suite's tests share: started by the first test that uses it (not per test), then
/// lent to one test at a time. Its state is owned by the `Mutex`, held while a test uses it, so a
/// non-`Sendable` server (``NginxServer``, ``IcecastServer``) is never used by two at once.
///
/// A suite keeps it in a `static let`, which is never deinitialised: the server is let go when
/// the test process exits (``SuiteServers``), so its deinit stops it (icecast2 and its ffmpeg
/// source, nginx) and removes its directory. Before, every `make test` left them running.
final class SuiteServer<Server>: Sendable {
    private let server = Mutex<Server?>(nil)
    private let make: @Sendable () throws -> Server

    init(_ make: @escaping @Sendable () throws -> Server) {
        self.make = make
    }

    /// Runs `body` with the server, starting it first if no test has yet.
    func use<Result: Sendable>(_ body: (Server) throws -> Result) throws -> Result {
        try server.withLock { server in
            let running: Server
            if let server { running = server } else {
                running = try make()
                SuiteServers.releaseAtExit { [self] in release() }
            }
            server = running
            return try body(running)
        }
    }

    /// Lets the server go (its deinit stops it), unless a test holds it: at exit none does, and a
    /// process that exits in the middle of a test must not wait for it.
    func release() {
        _ = server.withLockIfAvailable { $0 = nil }
    }
}

/// What the process lets go of when it exits (`atexit`): every ``SuiteServer`` started.
enum SuiteServers {
    private static let releases = Mutex<[@Sendable () -> Void]>([])
    private static let registered: Void = {
        atexit { SuiteServers.releaseAll() }
    }()

    static func releaseAtExit(_ release: @escaping @Sendable () -> Void) {
        _ = registered
        releases.withLock { $0.append(release) }
    }

    private static func releaseAll() {
        for release in releases.withLock({ $0 }) { release() }
    }
}

import Synchronization

/// A server a suite's tests share: started by the first test that uses it (not per test), then
/// lent to one test at a time. Its state is owned by the `Mutex`, held while a test uses it, so a
/// non-`Sendable` server (``NginxServer``, ``IcecastServer``) is never used by two at once.
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
            if let server { running = server } else { running = try make() }
            server = running
            return try body(running)
        }
    }
}

import ServiceLifecycle

/// One part of the running daemon (the player, the state keeper, the control server, the
/// status line, systemd's side) as a ``Service`` of the daemon's `ServiceGroup`.
///
/// A part's `run` starts it if it has a `start` (once the group runs, so SIGTERM is already
/// the group's: one sent while the daemon starts up stops it cleanly rather than killing it),
/// then waits: for the group's graceful shutdown (SIGTERM, SIGINT, or another part ending), or
/// for the part's own end when it has one (`--once`: the queue finished). Then it tears the
/// part down. The group tears the parts down one after another, in the reverse of their order,
/// so what a part needs is still there while it stops. A `start` that throws stops the group;
/// the daemon then exits with the error.
package struct DaemonPart: Service, CustomStringConvertible {
    package let description: String
    private let ended: AsyncStream<Void>?
    private let ending: AsyncStream<Void>.Continuation?
    private let start: @Sendable () async throws -> Void
    private let tearDown: @Sendable () async -> Void

    /// A part that runs until the group shuts down, then calls `tearDown`.
    package init(_ name: String, start: @escaping @Sendable () async throws -> Void = {},
         tearDown: @escaping @Sendable () async -> Void) {
        description = name
        ended = nil
        ending = nil
        self.start = start
        self.tearDown = tearDown
    }

    /// A part that also ends of itself, at the first ``end()``, which may come before the group
    /// runs. Give it `.gracefullyShutdownGroup` as its success behavior: its end stops the daemon
    /// on the same path as SIGTERM.
    package init(endingOnRequest name: String, tearDown: @escaping @Sendable () async -> Void = {}) {
        description = name
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        ended = stream
        ending = continuation
        start = {}
        self.tearDown = tearDown
    }

    /// Ends a part made with ``init(endingOnRequest:tearDown:)``; later calls do nothing.
    package func end() {
        ending?.yield()
        ending?.finish()
    }

    package func run() async throws {
        try await start()
        if let ended, let ending {
            await withGracefulShutdownHandler {
                for await _ in ended { break }
            } onGracefulShutdown: {
                ending.finish()
            }
        } else {
            // Thrown only if the group is cancelled (its shutdown took too long): tear down anyway.
            try? await gracefulShutdown()
        }
        await tearDown()
    }
}

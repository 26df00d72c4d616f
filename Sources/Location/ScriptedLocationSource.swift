import Synchronization

/// A source that reports what it is told: the tests' stand-in for gpsd, as the iOS
/// Simulator's scripted locations are. ``emit(_:)`` calls the manager's handler at once, on
/// the caller's thread (so a test sees the manager's reaction when it returns).
public final class ScriptedLocationSource: LocationSource {
    private struct State {
        var handler: (@Sendable (LocationSourceEvent) -> Void)?
        var sampling: SamplingPolicy?
    }

    private let state = Mutex(State())

    public init() {}

    /// How the manager last asked for fixes; nil while stopped.
    public var sampling: SamplingPolicy? { state.withLock { $0.sampling } }

    public func start(sampling: SamplingPolicy, handler: @escaping @Sendable (LocationSourceEvent) -> Void) {
        state.withLock {
            $0.sampling = sampling
            $0.handler = handler
        }
    }

    public func stop() {
        state.withLock {
            $0.sampling = nil
            $0.handler = nil
        }
    }

    /// Reports `event` if running (else it is lost, as a receiver's reports are while nobody listens).
    public func emit(_ event: LocationSourceEvent) {
        state.withLock { $0.handler }?(event)
    }

    /// Reports a fix.
    public func emit(_ location: Location) { emit(.location(location)) }
}

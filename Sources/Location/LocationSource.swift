/// Where fixes come from: gpsd (``GPSDLocationSource``) or a script (``ScriptedLocationSource``,
/// for tests). A ``LocationManager`` starts, reconfigures and stops it.
///
/// Contract: ``start(sampling:handler:)`` and ``stop()`` may be called from any thread and never
/// call the handler before they return (the manager calls them holding its lock); the handler
/// is called serially, from one thread at a time, until `stop` has taken effect.
public protocol LocationSource: AnyObject, Sendable {
    /// Starts delivering events to `handler`, or, when running, changes how often fixes are taken.
    func start(sampling: SamplingPolicy, handler: @escaping @Sendable (LocationSourceEvent) -> Void)
    /// Stops delivering; the source lets go of the receiver (gpsd's connection is closed).
    func stop()
}

/// How often a source takes a fix: the power knob ``LocationAccuracy/sampleInterval`` turns.
public enum SamplingPolicy: Hashable, Sendable {
    /// Every report the receiver makes (gpsd: watching all along).
    case continuous
    /// One fix, then silence for this many seconds (gpsd: the watch is switched off between fixes).
    case every(Double)
}

/// What a source reports.
public enum LocationSourceEvent: Hashable, Sendable {
    case location(Location)
    /// The receiver reports no fix.
    case noFix
    /// The source cannot be reached (why); it is tried again with back-off.
    case unavailable(String)
    /// The source answers (again).
    case available(String)
    /// Input dropped as unusable (why), for a debug log.
    case dropped(String)
}

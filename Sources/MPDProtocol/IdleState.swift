/// One client's idle bookkeeping, following mpd's `Client::IdleAdd/IdleWait/IdleNotify`.
///
/// * Changes are recorded from the moment the client connects, idling or not, including
///   changes caused by its own commands.
/// * Repeated changes of one subsystem collapse into one pending event.
/// * `idle` with pending events it subscribes to is answered at once; otherwise it waits.
/// * Answering an idle reports only the subscribed events but clears *all* pending events
///   (observed: `idle playlist` woken by `add` loses a pending `player`).
/// * An event outside the subscription leaves a waiting idle asleep and stays pending, also
///   across `noidle`, for a later `idle`.
public struct IdleState: Hashable, Sendable {
    /// Changes not yet reported to the client.
    public private(set) var pending: Set<Subsystem> = []
    /// While the client waits in `idle`: the subsystems it waits for. `nil` when not idling.
    public private(set) var subscription: Set<Subsystem>?

    /// Starts with nothing pending and not idling, as a new connection does.
    public init() {}

    /// Whether the client is waiting in `idle`.
    public var isWaiting: Bool { subscription != nil }

    /// Records changes. If this wakes a waiting idle, returns the subsystems to report
    /// (in mpd's order) and leaves idle mode; otherwise returns `nil`.
    public mutating func record(_ changed: some Sequence<Subsystem>) -> [Subsystem]? {
        pending.formUnion(changed)
        return wakeIfSubscribedEventPending()
    }

    /// Enters idle mode for `subsystems` (empty: all). Returns the subsystems to report at once
    /// if a subscribed event is already pending, or `nil` if the client now waits.
    public mutating func wait(for subsystems: some Sequence<Subsystem>) -> [Subsystem]? {
        let wanted = Set(subsystems)
        subscription = wanted.isEmpty ? Set(Subsystem.allCases) : wanted
        return wakeIfSubscribedEventPending()
    }

    /// Leaves idle mode on `noidle`. Returns whether the client was waiting (then it gets `OK`);
    /// pending events are kept.
    public mutating func cancelWait() -> Bool {
        defer { subscription = nil }
        return subscription != nil
    }

    private mutating func wakeIfSubscribedEventPending() -> [Subsystem]? {
        guard let subscription else { return nil }
        let reported = pending.intersection(subscription)
        guard !reported.isEmpty else { return nil }
        pending = []
        self.subscription = nil
        return Subsystem.inReportingOrder(reported)
    }

    /// The complete idle reply: one `changed: name` line per subsystem, then `OK`.
    public static func reply(reporting subsystems: [Subsystem]) -> String {
        subsystems.map { "changed: \($0.protocolName)\n" }.joined() + "OK\n"
    }
}

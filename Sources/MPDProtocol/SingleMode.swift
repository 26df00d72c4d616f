/// The `single` option: off, on, or on for one song only. `status` shows the raw value.
public enum SingleMode: String, Hashable, Sendable, CaseIterable {
    case off = "0"
    case on = "1"
    case oneshot
}

/// The `consume` option: off, on, or on for one song only (MPD 0.24's `oneshot`).
/// `status` shows the raw value.
public enum ConsumeMode: String, Hashable, Sendable, CaseIterable {
    case off = "0"
    case on = "1"
    case oneshot
}

/// How `save` treats a stored playlist that exists.
public enum SaveMode: String, Hashable, Sendable, CaseIterable {
    /// Plain `save`: an existing playlist is an error.
    case create
    /// Adds the queue to the end of the playlist, which must exist.
    case append
    /// Replaces the playlist, or creates it.
    case replace
}

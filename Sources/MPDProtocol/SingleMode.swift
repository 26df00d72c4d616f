/// The `single` option: off, on, or on for one song only.
public enum SingleMode: String, Hashable, Sendable, CaseIterable {
    case off = "0"
    case on = "1"
    case oneshot

    /// The value as `status` reports it (`single: 0`, `single: 1`, `single: oneshot`).
    public var protocolValue: String { rawValue }
}

/// Where the daemon is in the iOS application life cycle it mirrors.
public enum ApplicationState: String, Sendable, Hashable, CaseIterable {
    /// In the foreground and receiving events (after `SIGUSR2`, and at start).
    case active
    /// In transition between foreground and background.
    case inactive
    /// In the background: running, but nothing is shown (after `SIGUSR1`).
    case background
    /// In the background and asleep: no timers fire, the audio device is released.
    case suspended
}

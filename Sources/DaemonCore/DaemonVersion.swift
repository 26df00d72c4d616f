import MPDProtocol

/// What `queueplayerd --version` prints: the daemon's version and the MPD protocol version its
/// control socket announces. The number is raised when a release is made (docs/user-guide.md, "Versions").
public enum DaemonVersion {
    public static let number = "0.1.0"

    /// `queueplayerd 0.1.0 (MPD protocol 0.23.5)`.
    public static var description: String {
        "queueplayerd \(number) (MPD protocol \(ClientSession.protocolVersion))"
    }
}

/// Identifies a finite-length task begun with ``Application/beginBackgroundTask(name:expirationHandler:)``.
public struct BackgroundTaskIdentifier: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int

    /// The identifier of no task; ending it does nothing (UIKit's `.invalid`).
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)

    public var description: String { "BackgroundTask(\(rawValue))" }
}

/// A running background task.
struct BackgroundTask {
    let name: String
    let expirationHandler: (@Sendable () -> Void)?
    var expired = false
}

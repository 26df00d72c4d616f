/// What background fetch needs from the application it runs in: to be woken for a fetch
/// and kept awake until it ends (a background task), as iOS does for an app's
/// `performFetchWithCompletionHandler`.
///
/// The daemon's life cycle implements it; tests give one that records the calls.
public protocol BackgroundFetchHost: Sendable {
    /// Wakes a suspended daemon into the background if need be and begins a background task
    /// named `name` that may last `allowance` seconds. `expirationHandler` runs if the time
    /// runs out first: the fetch must stop. Returns the task, to end when the fetch is done.
    func beginBackgroundFetch(named name: String, allowance: Double,
                              expirationHandler: @escaping @Sendable () -> Void) async -> any BackgroundFetchTask
}

/// A background task begun for a fetch.
public protocol BackgroundFetchTask: Sendable {
    /// Ends the task: the daemon may be suspended again. Later calls do nothing.
    func end()
}

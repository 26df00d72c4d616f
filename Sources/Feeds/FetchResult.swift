/// How a fetch of one feed ended, in the terms of iOS's `UIBackgroundFetchResult`: the
/// daemon logs it and keeps it per feed, and a background fetch reports it when it ends.
public enum FetchResult: Equatable, Sendable, CustomStringConvertible {
    /// The feed had this many episodes not known before (at least one).
    case newData(Int)
    /// The feed was read and nothing in it is new.
    case noData
    /// The feed could not be read; what was known is kept.
    case failed(FeedError)

    public var description: String {
        switch self {
        case .newData(let count): "newData (\(count) new episode\(count == 1 ? "" : "s"))"
        case .noData: "noData"
        case .failed(let error): "failed (\(error))"
        }
    }
}

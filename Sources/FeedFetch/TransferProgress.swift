/// What one download is doing, as the WebSocket's `download` events report it: which episode,
/// how many bytes are in its `.part` file of how many, and its state.
public struct TransferProgress: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Journaled, waiting for one of the download slots.
        case queued
        /// An attempt runs: bytes arrive.
        case downloading
        /// The last attempt failed in a way worth another try (a lost connection, a server
        /// error, too slow, no space): it is tried again after a back-off. Transfers go on in
        /// every app state (suspension stops audio, not transfers), so this is the only pause.
        case waiting(String)
        /// Given up: never tried again (not audio, too large, gone, too many failures).
        case failed(String)
        /// In the music directory, handed to the library.
        case finished

        /// The name the events give it.
        public var name: String {
            switch self {
            case .queued: "queued"
            case .downloading: "downloading"
            case .waiting: "waiting"
            case .failed: "failed"
            case .finished: "done"
            }
        }

        /// Why it waits or failed.
        public var reason: String? {
            switch self {
            case .waiting(let why), .failed(let why): why
            default: nil
            }
        }
    }

    /// A number for the download, unique for the process's life (a job's own id is the feed's
    /// URL and the episode's guid, too long and too revealing to send each time).
    public var number: Int
    /// The episode's title (nil for a job journaled before titles were kept).
    public var title: String?
    /// The feed's title.
    public var feedTitle: String?
    /// `Podcasts/<feed>/<episode>.mp3`, relative to the music directory.
    public var relativePath: String
    /// Bytes in the `.part` file (what a resumed attempt started from included).
    public var received: Int64
    /// The whole file's size, once a response said it; nil until then, or if none did.
    public var expected: Int64?
    public var state: State

    public init(number: Int, title: String?, feedTitle: String?, relativePath: String, received: Int64 = 0,
                expected: Int64? = nil, state: State) {
        self.number = number
        self.title = title
        self.feedTitle = feedTitle
        self.relativePath = relativePath
        self.received = received
        self.expected = expected
        self.state = state
    }
}

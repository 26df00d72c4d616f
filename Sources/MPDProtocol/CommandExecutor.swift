/// Runs the commands that need the player, the queue or the library.
///
/// The session calls it synchronously, once per command, in order; it is never called for
/// commands where ``Command/isHandledBySession`` is true. Return the reply body (``Reply/empty``
/// for commands that only act) or throw an ``MPDError``; the session adds the command name,
/// the command-list index, and `OK`/`list_OK`.
///
/// Do not call ``ClientSession/notify(_:)`` on the same session from inside `execute`
/// (the session is being mutated); report the resulting changes after `receive` returns.
public protocol CommandExecutor {
    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply
}

/// Per-client information an executor may need.
public struct CommandContext: Hashable, Sendable {
    /// The tags this client has enabled with `tagtypes`. Song blocks are filtered by the
    /// session anyway; this is for executors that want to skip work.
    public var tagTypes: Set<TagType>
    /// The 0-based index inside a command list, or `nil` outside one.
    public var listIndex: Int?
    /// Which client sent the command (``ClientSession/clientID``): per-client state such as
    /// message subscriptions is kept by it.
    public var clientID: Int
    /// The most payload bytes one binary reply may carry (`binarylimit`; MPD's default 8192).
    public var binaryLimit: Int
    /// Who the client is (``ClientSession/peer``: its address, or `local` on a Unix socket):
    /// what the executor keys per-peer limits by (failed `password`s).
    public var peer: String
    /// Whether the client is on a Unix socket (``ClientSession/isLocal``): `config` answers
    /// only such a client, as mpd's does.
    public var isLocal: Bool

    /// Creates a context; the session makes one per executed command.
    public init(tagTypes: Set<TagType> = Set(TagType.allCases), listIndex: Int? = nil, clientID: Int = 0,
                binaryLimit: Int = ClientSession.defaultBinaryLimit, peer: String = "",
                isLocal: Bool = false) {
        self.tagTypes = tagTypes
        self.listIndex = listIndex
        self.clientID = clientID
        self.binaryLimit = binaryLimit
        self.peer = peer
        self.isLocal = isLocal
    }
}

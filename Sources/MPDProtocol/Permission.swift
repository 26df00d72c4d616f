/// What a client may do, as mpd's `Permission.hxx` has it: each command of mpd's table needs a
/// set of these (``required(forCommandNamed:)``), and a client holds the set its listener and
/// its `password` gave it.
///
/// The raw values are mpd's (`PERMISSION_READ` 1 ... `PERMISSION_PLAYER` 16), so a set means the
/// same thing in both daemons' logs and configurations.
public struct Permission: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Status, the queue's and the library's contents, pictures, `idle`.
    public static let read = Permission(rawValue: 1)
    /// Adding to the queue (`add`, `findadd`, `load`...).
    public static let add = Permission(rawValue: 2)
    /// Stored playlists, `update`, messages to other clients.
    public static let control = Permission(rawValue: 4)
    /// Outputs, `config`, `kill`, stickers.
    public static let admin = Permission(rawValue: 8)
    /// Transport, options, volume, removing from the queue.
    public static let player = Permission(rawValue: 16)

    /// Every permission: mpd's default when no password is configured.
    public static let all: Permission = [.read, .add, .control, .admin, .player]

    /// The names in mpd's order (`read,add,player,control,admin`), as configurations spell them.
    public static let names: [(String, Permission)] = [
        ("read", .read), ("add", .add), ("player", .player), ("control", .control), ("admin", .admin),
    ]

    /// Parses mpd's comma-separated list (`read,add,control`); an empty list is no permission.
    /// As in mpd 0.23, `control` implies `player` (what `control` covered before `player` existed).
    /// Throws the name that is not a permission.
    public static func parse(_ text: String) throws(PermissionParseError) -> Permission {
        var permission: Permission = []
        for name in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let found = names.first(where: { $0.0 == name }) else {
                throw PermissionParseError(name: String(name))
            }
            permission.insert(found.1)
        }
        if permission.contains(.control) { permission.insert(.player) }
        return permission
    }

    /// `read,add,...` (mpd's order), or `none`.
    public var description: String {
        let listed = Self.names.filter { contains($0.1) }.map(\.0)
        return listed.isEmpty ? "none" : listed.joined(separator: ",")
    }

    /// What mpd 0.23's command table (`src/command/AllCommands.cxx`) asks for the command
    /// `name`; a name the table lacks asks for ``admin`` (nothing unknown is let through
    /// by a missing entry).
    public static func required(forCommandNamed name: String) -> Permission {
        CommandTable.permission(named: name)
    }

    /// Whether these permissions allow the command `name` (mpd's
    /// `cmd->permission == (permission & cmd->permission)`).
    public func allows(commandNamed name: String) -> Bool {
        isSuperset(of: Self.required(forCommandNamed: name))
    }

    /// The error mpd sends for a command the client may not use.
    public static func refusal(of name: String) -> MPDError {
        MPDError(.permission, "you don't have permission for \"\(name)\"", command: name)
    }
}

/// A permission list naming something that is not a permission.
public struct PermissionParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public var description: String { "unknown permission \"\(name)\"" }
}

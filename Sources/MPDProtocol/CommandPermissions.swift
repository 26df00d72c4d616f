extension CommandTable {
    /// The commands of mpd 0.23's table (`src/command/AllCommands.cxx`) that this daemon does not
    /// implement, with the permission mpd asks for (its second column), so that
    /// ``Permission/required(forCommandNamed:)`` answers for every name of mpd's table, and a row
    /// added for one of them moves its permission from here. (A client sending one is answered
    /// `unknown command`, whatever its permissions.) Every command this daemon implements has its
    /// permission in its row.
    static let unimplementedPermissions: [String: Permission] = [
        "getfingerprint": .read, "listmounts": .read, "listneighbors": .read,
        "mount": .admin, "unmount": .admin,
    ]
}

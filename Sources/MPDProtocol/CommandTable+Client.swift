extension CommandTable {
    /// The client's own standing (MPD's `ClientCommands.cxx`): its password; and its say over
    /// the daemon's life (`kill`, MPD's `OtherCommands.cxx`, which takes any arguments).
    static let clientEntries: [Entry] = [
        entry(.password, "password", .exactly(1), []) { arguments, _ throws(MPDError) in .password(arguments[0]) },
        entry(.kill, "kill", .unchecked, .admin) { _, _ throws(MPDError) in .kill },
    ]
}

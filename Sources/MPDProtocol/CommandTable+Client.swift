extension CommandTable {
    /// The client's own standing (MPD's `ClientCommands.cxx`): its password.
    static let clientEntries: [Entry] = [
        entry("password", .exactly(1)) { arguments, _ throws(MPDError) in .password(arguments[0]) },
    ]
}

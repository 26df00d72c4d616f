extension CommandTable {
    /// The playback rate, its pitch algorithm and skip silence: not mpd's, named in its style.
    /// Each is a player setting, so each needs `player`, as `repeat` does. The rate's range and the
    /// algorithm's names are the player's, which the daemon checks (this module knows no player).
    static let paceEntries: [Entry] = [
        entry(.rate, "rate", .exactly(1), .player) { arguments, _ throws(MPDError) in .rate(arguments[0]) },
        entry(.pitchalgorithm, "pitchalgorithm", .exactly(1), .player) { arguments, _ throws(MPDError) in .pitchalgorithm(arguments[0]) },
        entry(.skipsilence, "skipsilence", .exactly(1), .player) { arguments, parse throws(MPDError) in
            .skipsilence(try parse.boolean(arguments[0]))
        },
    ]
}

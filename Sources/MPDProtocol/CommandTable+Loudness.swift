extension CommandTable {
    /// Loudness measurement: not mpd's, named in its style. Measuring is background work whose
    /// result changes what plays (`player`, as `replay_gain_mode`); reading it needs `read`.
    static let loudnessEntries: [Entry] = [
        entry(.loudnessscan, "loudnessscan", .between(0, 1), .player, [.expensive]) { arguments, _ throws(MPDError) in
            .loudnessscan(arguments.first)
        },
        entry(.loudness, "loudness", .between(0, 1), .read) { arguments, _ throws(MPDError) in .loudness(arguments.first) },
    ]
}

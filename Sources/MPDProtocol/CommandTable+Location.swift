extension CommandTable {
    /// Location updates and regions: not mpd's, named in its style. Reading where the daemon is
    /// needs `read`, as `status` does; changing how it listens needs `player`, as a player
    /// setting does.
    static let locationEntries: [Entry] = [
        simple("location", .read, .location),
        simple("locations", .read, .locations),
        entry(.locationupdates, "locationupdates", .exactly(1), .player) { arguments, parse throws(MPDError) in
            guard let mode = LocationUpdatesMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized location updates mode, expected 0, 1, or significant", command: parse.command)
            }
            return .locationupdates(mode)
        },
        entry(.locationaccuracy, "locationaccuracy", .exactly(1), .player) { arguments, _ throws(MPDError) in .locationaccuracy(arguments[0]) },
        entry(.locationdistance, "locationdistance", .exactly(1), .player) { arguments, parse throws(MPDError) in
            if arguments[0] == "none" { return .locationdistance(nil) }
            let metres = try parse.float(arguments[0])
            guard metres.isFinite, metres >= 0 else {
                throw MPDError(.argument, "Expected metres (0 or more) or none: \(arguments[0])", command: parse.command)
            }
            return .locationdistance(metres == 0 ? nil : metres)
        },
        simple("regions", .read, .regions),
    ]
}

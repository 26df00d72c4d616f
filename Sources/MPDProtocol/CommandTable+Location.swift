extension CommandTable {
    /// Location updates and regions (issue 30): not mpd's, named in its style.
    static let locationEntries: [Entry] = [
        simple("location", .location),
        simple("locations", .locations),
        entry("locationupdates", .exactly(1)) { arguments, _ throws(MPDError) in
            guard let mode = LocationUpdatesMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized location updates mode, expected 0, 1, or significant", command: "locationupdates")
            }
            return .locationupdates(mode)
        },
        entry("locationaccuracy", .exactly(1)) { arguments, _ throws(MPDError) in .locationaccuracy(arguments[0]) },
        entry("locationdistance", .exactly(1)) { arguments, parse throws(MPDError) in
            if arguments[0] == "none" { return .locationdistance(nil) }
            let metres = try parse.float(arguments[0])
            guard metres.isFinite, metres >= 0 else {
                throw MPDError(.argument, "Expected metres (0 or more) or none: \(arguments[0])", command: "locationdistance")
            }
            return .locationdistance(metres == 0 ? nil : metres)
        },
        simple("regions", .regions),
    ]
}

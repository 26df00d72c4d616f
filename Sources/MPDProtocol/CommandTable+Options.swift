extension CommandTable {
    /// Play options that are not the queue's, the software mixer, the player's error, and partitions.
    static let optionEntries: [Entry] = [
        entry(.crossfade, "crossfade", .exactly(1), .player) { arguments, parse throws(MPDError) in .crossfade(try parse.unsigned(arguments[0])) },
        entry(.mixrampdb, "mixrampdb", .exactly(1), .player) { arguments, parse throws(MPDError) in .mixrampdb(try parse.float(arguments[0])) },
        entry(.mixrampdelay, "mixrampdelay", .exactly(1), .player) { arguments, parse throws(MPDError) in
            // `nan` switches MixRamp off; strtof reads it, so mpd accepts it.
            if arguments[0].lowercased() == "nan" { return .mixrampdelay(nil) }
            return .mixrampdelay(try parse.float(arguments[0]))
        },
        entry(.volume, "volume", .exactly(1), .player) { arguments, parse throws(MPDError) in
            let change = try parse.integer(arguments[0])
            guard (-100...100).contains(change) else {
                throw MPDError(.argument, "Number too large: \(arguments[0])", command: parse.command)
            }
            return .volume(change)
        },
        simple("getvol", .read, .getvol),
        entry(.replayGainMode, "replay_gain_mode", .exactly(1), .player) { arguments, _ throws(MPDError) in .replayGainMode(arguments[0]) },
        simple("replay_gain_status", .read, .replayGainStatus),
        simple("clearerror", .player, .clearerror),
        simple("listpartitions", .read, .listpartitions),
        entry(.partition, "partition", .exactly(1), .read) { arguments, _ throws(MPDError) in .partition(arguments[0]) },
        entry(.newpartition, "newpartition", .exactly(1), .admin) { arguments, _ throws(MPDError) in .newpartition(arguments[0]) },
        entry(.delpartition, "delpartition", .exactly(1), .admin) { arguments, _ throws(MPDError) in .delpartition(arguments[0]) },
        entry(.moveoutput, "moveoutput", .exactly(1), .admin) { arguments, _ throws(MPDError) in .moveoutput(arguments[0]) },
        // The attribute's name is checked after the output's id, by the executor, as MPD does.
        entry(.outputset, "outputset", .exactly(3), .admin) { arguments, parse throws(MPDError) in
            .outputset(try parse.unsigned(arguments[0]), name: arguments[1], value: arguments[2])
        },
    ]

    /// Client-to-client messages (MPD's `MessageCommands.cxx`).
    static let messageEntries: [Entry] = [
        entry(.subscribe, "subscribe", .exactly(1), .read) { arguments, _ throws(MPDError) in .subscribe(arguments[0]) },
        entry(.unsubscribe, "unsubscribe", .exactly(1), .read) { arguments, _ throws(MPDError) in .unsubscribe(arguments[0]) },
        simple("channels", .read, .channels, [.listReply]),
        entry(.sendmessage, "sendmessage", .exactly(2), .control) { arguments, _ throws(MPDError) in
            .sendmessage(channel: arguments[0], text: arguments[1])
        },
        simple("readmessages", .read, .readmessages, [.listReply]),
    ]

    /// Stored playlists (MPD's `PlaylistCommands.cxx`).
    static let playlistEntries: [Entry] = [
        entry(.save, "save", .between(1, 2), .control) { arguments, parse throws(MPDError) in
            guard let text = arguments.dropFirst().first else { return .save(arguments[0], .create) }
            guard let mode = SaveMode(rawValue: text) else {
                throw MPDError(.argument, "Unrecognized save mode, expected one of 'create', 'append', 'replace'", command: parse.command)
            }
            return .save(arguments[0], mode)
        },
        entry(.load, "load", .between(1, 3), .add, [.expensive, .namesPlaylists]) { arguments, parse throws(MPDError) in
            let range = try arguments.dropFirst().first.map { text throws(MPDError) in try parse.range(text) } ?? .all
            return .load(arguments[0], range, try position(arguments.dropFirst(2).first, parse))
        },
        simple("listplaylists", .read, .listplaylists, [.listReply]),
        entry(.listplaylist, "listplaylist", .between(1, 2), .read, [.namesPlaylists, .listReply]) { arguments, parse throws(MPDError) in
            .listplaylist(arguments[0], try arguments.dropFirst().first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.listplaylistinfo, "listplaylistinfo", .between(1, 2), .read, [.expensive, .namesPlaylists, .listReply]) { arguments, parse throws(MPDError) in
            .listplaylistinfo(arguments[0], try arguments.dropFirst().first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.playlistadd, "playlistadd", .between(2, 3), .control) { arguments, parse throws(MPDError) in
            .playlistadd(arguments[0], uri: arguments[1],
                         position: try arguments.dropFirst(2).first.map { text throws(MPDError) in try parse.unsigned(text) })
        },
        entry(.playlistclear, "playlistclear", .exactly(1), .control) { arguments, _ throws(MPDError) in .playlistclear(arguments[0]) },
        entry(.playlistdelete, "playlistdelete", .exactly(2), .control) { arguments, parse throws(MPDError) in
            .playlistdelete(arguments[0], try parse.range(arguments[1]))
        },
        entry(.playlistmove, "playlistmove", .exactly(3), .control) { arguments, parse throws(MPDError) in
            .playlistmove(arguments[0], try parse.range(arguments[1]), to: try parse.unsigned(arguments[2]))
        },
        entry(.rename, "rename", .exactly(2), .control) { arguments, _ throws(MPDError) in .rename(arguments[0], to: arguments[1]) },
        entry(.rm, "rm", .exactly(1), .control) { arguments, _ throws(MPDError) in .rm(arguments[0]) },
    ]
}

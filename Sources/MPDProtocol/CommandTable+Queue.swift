extension CommandTable {
    /// The queue with ids, positions, priorities and versions (MPD's `QueueCommands.cxx`).
    static let queueEntries: [Entry] = [
        entry(.addid, "addid", .between(1, 2), .add) { arguments, parse throws(MPDError) in
            .addid(uri: arguments[0], position: try position(arguments.dropFirst().first, parse))
        },
        entry(.deleteid, "deleteid", .exactly(1), .player) { arguments, parse throws(MPDError) in .deleteid(try parse.unsigned(arguments[0])) },
        entry(.move, "move", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .move(try parse.range(arguments[0]), to: try QueuePosition.parse(arguments[1], parse))
        },
        entry(.moveid, "moveid", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .moveid(try parse.unsigned(arguments[0]), to: try QueuePosition.parse(arguments[1], parse))
        },
        entry(.swap, "swap", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .swap(try parse.unsigned(arguments[0]), try parse.unsigned(arguments[1]))
        },
        entry(.swapid, "swapid", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .swapid(try parse.unsigned(arguments[0]), try parse.unsigned(arguments[1]))
        },
        entry(.shuffle, "shuffle", .between(0, 1), .player) { arguments, parse throws(MPDError) in
            .shuffle(try arguments.first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.prio, "prio", .between(2, nil), .player) { arguments, parse throws(MPDError) in
            let priority = UInt8(try parse.unsigned(arguments[0], maximum: 255))
            return .prio(priority, try arguments.dropFirst().map { text throws(MPDError) in try parse.range(text) })
        },
        entry(.prioid, "prioid", .between(2, nil), .player) { arguments, parse throws(MPDError) in
            let priority = UInt8(try parse.unsigned(arguments[0], maximum: 255))
            return .prioid(priority, try arguments.dropFirst().map { text throws(MPDError) in try parse.unsigned(text) })
        },
        entry(.playid, "playid", .between(0, 1), .player) { arguments, parse throws(MPDError) in
            guard let text = arguments.first else { return .playid(nil) }
            let id = try parse.integer(text)
            return .playid(id < 0 ? nil : id)
        },
        entry(.seek, "seek", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .seek(position: try parse.unsigned(arguments[0]), seconds: max(0, try parse.float(arguments[1])))
        },
        entry(.seekid, "seekid", .exactly(2), .player) { arguments, parse throws(MPDError) in
            .seekid(id: try parse.unsigned(arguments[0]), seconds: max(0, try parse.float(arguments[1])))
        },
        entry(.playlistid, "playlistid", .between(0, 1), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            .playlistid(try arguments.first.map { text throws(MPDError) in try parse.unsigned(text) })
        },
        entry(.plchanges, "plchanges", .between(1, 2), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            .plchanges(version: UInt32(try parse.unsigned(arguments[0])),
                       try arguments.dropFirst().first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.plchangesposid, "plchangesposid", .between(1, 2), .read, [.listReply]) { arguments, parse throws(MPDError) in
            .plchangesposid(version: UInt32(try parse.unsigned(arguments[0])),
                            try arguments.dropFirst().first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.playlistfind, "playlistfind", .between(1, nil), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            .playlistfind(try filter(arguments, foldCase: false, command: parse.command))
        },
        entry(.playlistsearch, "playlistsearch", .between(1, nil), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            .playlistsearch(try filter(arguments, foldCase: true, command: parse.command))
        },
        simple("playlist", .read, .playlist, [.expensive, .listReply]),
        entry(.rangeid, "rangeid", .exactly(2), .add) { arguments, parse throws(MPDError) in
            let id = try parse.unsigned(arguments[0])
            guard let range = SongTimeRange(parsing: arguments[1]) else {
                throw MPDError(.argument, "Bad range", command: parse.command)
            }
            return .rangeid(id, range)
        },
        // MPD's TagCommands.cxx: the id is read first, then the tag's name.
        entry(.addtagid, "addtagid", .exactly(3), .add) { arguments, parse throws(MPDError) in
            let id = try parse.unsigned(arguments[0])
            return .addtagid(id, tag: try tagName(arguments[1], command: parse.command), value: arguments[2])
        },
        entry(.cleartagid, "cleartagid", .between(1, 2), .add) { arguments, parse throws(MPDError) in
            let id = try parse.unsigned(arguments[0])
            return .cleartagid(id, tag: try arguments.dropFirst().first.map { name throws(MPDError) in
                try tagName(name, command: parse.command)
            })
        },
    ]

    /// A tag name as MPD's `tag_name_parse_i` reads it (any case), in MPD's spelling;
    /// `Unknown tag type: NAME` otherwise.
    static func tagName(_ name: String, command: String) throws(MPDError) -> String {
        if let tag = TagType(protocolName: name) { return tag.protocolName }
        if let known = TagType.knownButDisabledNames.first(where: { ASCII.equalsIgnoringCase($0, name) }) { return known }
        throw MPDError(.argument, "Unknown tag type: \(name)", command: command)
    }

    /// An optional insert position argument (`N`, `+N`, `-N`).
    static func position(_ text: String?, _ parse: ArgumentParsing) throws(MPDError) -> QueuePosition? {
        guard let text else { return nil }
        return try QueuePosition.parse(text, parse)
    }

    /// A song filter, with parse errors attributed to `command`.
    static func filter(_ arguments: [String], foldCase: Bool, command: String) throws(MPDError) -> SongFilter {
        do {
            return try SongFilter(arguments: arguments, foldCase: foldCase)
        } catch {
            throw error.attributed(to: command)
        }
    }
}

extension CommandTable {
    /// The music database (MPD's `DatabaseCommands.cxx`, `FileCommands.cxx`, `OtherCommands.cxx`).
    static let databaseEntries: [Entry] = [
        entry(.rescan, "rescan", .between(0, 1), .control, [.expensive]) { arguments, parse throws(MPDError) in
            guard let uri = arguments.first, !uri.isEmpty, uri != "/" else { return .rescan(uri: nil) }
            guard LocalURI.isSafe(uri) else { throw MPDError(.argument, "Malformed path", command: parse.command) }
            return .rescan(uri: uri)
        },
        entry(.lsinfo, "lsinfo", .between(0, 1), .read, [.expensive, .listReply]) { arguments, _ throws(MPDError) in .lsinfo(arguments.first ?? "") },
        entry(.listall, "listall", .between(0, 1), .read, [.expensive, .listReply]) { arguments, _ throws(MPDError) in .listall(arguments.first ?? "") },
        entry(.listallinfo, "listallinfo", .between(0, 1), .read, [.expensive, .listReply]) { arguments, _ throws(MPDError) in .listallinfo(arguments.first ?? "") },
        entry(.listfiles, "listfiles", .between(0, 1), .read, [.expensive, .listReply]) { arguments, _ throws(MPDError) in .listfiles(arguments.first ?? "") },
        entry(.list, "list", .between(1, nil), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in try list(arguments, parse) },
        entry(.find, "find", .between(1, nil), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            let (filter, sort, window) = try query(arguments, foldCase: false, command: parse.command, parse)
            return .find(filter, sort: sort, window: window)
        },
        entry(.search, "search", .between(1, nil), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            let (filter, sort, window) = try query(arguments, foldCase: true, command: parse.command, parse)
            return .search(filter, sort: sort, window: window)
        },
        entry(.findadd, "findadd", .between(1, nil), .add, [.expensive]) { arguments, parse throws(MPDError) in
            let (rest, position) = try trailingPosition(arguments, parse)
            return .findadd(try filter(rest, foldCase: false, command: parse.command), position: position)
        },
        entry(.searchadd, "searchadd", .between(1, nil), .add, [.expensive]) { arguments, parse throws(MPDError) in
            let (rest, position) = try trailingPosition(arguments, parse)
            return .searchadd(try filter(rest, foldCase: true, command: parse.command), position: position)
        },
        entry(.count, "count", .between(1, nil), .read, [.expensive]) { arguments, parse throws(MPDError) in
            var rest = arguments
            var group: FilterKey?
            if rest.count >= 2, rest[rest.count - 2] == "group" {
                group = try groupKey(rest[rest.count - 1], command: parse.command)
                rest.removeLast(2)
            }
            return .count(rest.isEmpty ? nil : try filter(rest, foldCase: false, command: parse.command), group: group)
        },
        entry(.searchaddpl, "searchaddpl", .between(2, nil), .control, [.expensive]) { arguments, parse throws(MPDError) in
            // MPD's order: the name, a trailing `position N`, then `window`, `sort` and the filter.
            var rest = Array(arguments.dropFirst())
            var position: Int?
            if rest.count >= 2, rest[rest.count - 2] == "position" {
                position = try parse.unsigned(rest[rest.count - 1])
                rest.removeLast(2)
            }
            let (filter, sort, window) = try query(rest, foldCase: true, command: parse.command, parse)
            return .searchaddpl(arguments[0], filter, sort: sort, window: window, position: position)
        },
        simple("stats", .read, .stats, [.expensive]),
        simple("urlhandlers", .read, .urlhandlers, [.listReply]),
        simple("decoders", .read, .decoders, [.listReply]),
        entry(.albumart, "albumart", .exactly(2), .read, [.expensive]) { arguments, parse throws(MPDError) in
            .albumart(uri: arguments[0], offset: try parse.unsigned(arguments[1]))
        },
        entry(.readcomments, "readcomments", .exactly(1), .read, [.expensive]) { arguments, _ throws(MPDError) in .readcomments(uri: arguments[0]) },
        entry(.readpicture, "readpicture", .exactly(2), .read, [.expensive]) { arguments, parse throws(MPDError) in
            .readpicture(uri: arguments[0], offset: try parse.unsigned(arguments[1]))
        },
    ]

    /// `list TAG [FILTER] [group TAG...]`, with MPD 0.20's `list album ARTIST` as well.
    private static func list(_ arguments: [String], _ parse: ArgumentParsing) throws(MPDError) -> Command {
        guard let key = FilterKey(arguments[0]), key != .any, key != .base, key != .modifiedSince else {
            throw MPDError(.argument, "Unknown tag type: \(arguments[0])", command: parse.command)
        }
        var rest = Array(arguments.dropFirst())
        var groups: [FilterKey] = []
        while rest.count >= 2, rest[rest.count - 2] == "group" {
            groups.insert(try groupKey(rest[rest.count - 1], command: parse.command), at: 0)
            rest.removeLast(2)
        }
        if key == .tag(.album), rest.count == 1, !rest[0].hasPrefix("(") {
            rest = ["Artist", rest[0]]  // `list album ARTIST`
        }
        let songFilter = rest.isEmpty ? nil : try filter(rest, foldCase: false, command: parse.command)
        return .list(key, songFilter, groups: groups)
    }

    private static func groupKey(_ name: String, command: String) throws(MPDError) -> FilterKey {
        guard let key = FilterKey(name), key != .any, key != .base, key != .modifiedSince else {
            throw MPDError(.argument, "Unknown tag type: \(name)", command: command)
        }
        return key
    }

    /// A filter followed by `sort TAG` and `window START:END`, in either order.
    private static func query(_ arguments: [String], foldCase: Bool, command: String, _ parse: ArgumentParsing)
        throws(MPDError) -> (SongFilter, SongOrder?, PositionRange?)
    {
        var rest = arguments
        var sort: SongOrder?
        var window: PositionRange?
        while rest.count >= 3 {
            let (keyword, value) = (rest[rest.count - 2], rest[rest.count - 1])
            if keyword == "window", window == nil {
                window = try parse.range(value)
            } else if keyword == "sort", sort == nil {
                do { sort = try SongOrder.parse(value) } catch { throw error.attributed(to: command) }
            } else {
                break
            }
            rest.removeLast(2)
        }
        return (try filter(rest, foldCase: foldCase, command: command), sort, window)
    }

    /// A trailing `position POS`.
    private static func trailingPosition(_ arguments: [String], _ parse: ArgumentParsing)
        throws(MPDError) -> ([String], QueuePosition?)
    {
        guard arguments.count >= 3, arguments[arguments.count - 2] == "position" else { return (arguments, nil) }
        return (Array(arguments.dropLast(2)), try QueuePosition.parse(arguments[arguments.count - 1], parse))
    }
}

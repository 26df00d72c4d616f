/// mpd's command table (`src/command/AllCommands.cxx`), for the commands this daemon supports:
/// one row per command, the only place its name, argument counts, permission and traits are
/// declared, with how its arguments are typed. What else depends on a command is read from the
/// rows: `commands` and `notcommands`, permission checks (``Permission/required(forCommandNamed:)``),
/// ``Command/Kind``'s name and traits, the byte-level name tests of command lists, the
/// WebSocket's refusals (``Command/namesNotTakenOverWebSocket``), and a daemon's dispatch, keyed
/// by ``Command/Kind``.
enum CommandTable {
    /// How many arguments a command takes; mirrors `min`/`max` in mpd's `AllCommands.cxx`.
    enum Arity: Sendable {
        /// mpd's `-1, -1`: any number, not checked (`close`).
        case unchecked
        /// At least `min`, at most `max` (`nil`: no upper limit).
        case between(Int, Int?)

        static func exactly(_ count: Int) -> Arity { .between(count, count) }
    }

    /// What a row says of its command besides its arguments and permission.
    struct Traits: OptionSet, Sendable {
        let rawValue: UInt8

        /// Its work or reply grows with the queue or the library, or it reads a file
        /// (``Command/isExpensive``).
        static let expensive = Traits(rawValue: 1 << 0)
        /// ``ClientSession`` answers it itself (``Command/isHandledBySession``).
        static let session = Traits(rawValue: 1 << 1)
        /// `commands` does not list it (mpd's table has no `noidle`).
        static let unlisted = Traits(rawValue: 1 << 2)
        /// The WebSocket does not take it (``Command/namesNotTakenOverWebSocket``).
        static let notOverWebSocket = Traits(rawValue: 1 << 3)
        /// Its first argument may name a remote playlist, which the daemon fetches before the
        /// command runs (``ClientSession/pendingPlaylistURLs``).
        static let namesPlaylists = Traits(rawValue: 1 << 4)
        /// Its reply is a list of entries (songs, outputs, names), which the WebSocket answers as an
        /// array (``Command/repliesWithList(named:)``).
        static let listReply = Traits(rawValue: 1 << 5)
    }

    /// One row of the table.
    final class Entry: Sendable {
        let kind: Command.Kind
        let name: String
        let arity: Arity
        /// What a client needs to run it (mpd's second column).
        let permission: Permission
        let traits: Traits
        let build: @Sendable (_ arguments: [String], _ parse: ArgumentParsing) throws(MPDError) -> Command

        init(kind: Command.Kind, name: String, arity: Arity, permission: Permission, traits: Traits,
             build: @escaping @Sendable (_ arguments: [String], _ parse: ArgumentParsing) throws(MPDError) -> Command) {
            self.kind = kind
            self.name = name
            self.arity = arity
            self.permission = permission
            self.traits = traits
            self.build = build
        }
    }

    static func command(for request: Request) throws(MPDError) -> Command {
        guard let entry = entries[request.name] else {
            throw MPDError(.unknown, "unknown command \"\(request.name)\"")
        }
        return try command(entry, request.arguments)
    }

    /// The command `entry` makes of `arguments`, after mpd's count check.
    static func command(_ entry: Entry, _ arguments: [String]) throws(MPDError) -> Command {
        try check(entry, count: arguments.count)
        return try entry.build(arguments, ArgumentParsing(command: entry.name))
    }

    /// Every row, as declared.
    static let rows: [Entry] = mpdRows + ownRows

    /// The rows of mpd's own commands (its `AllCommands.cxx`).
    static let mpdRows: [Entry] = coreEntries + queueEntries + optionEntries + messageEntries + playlistEntries
        + databaseEntries + clientEntries + stickerEntries

    /// The rows of this daemon's own commands, which mpd has not (location, loudness, sleep, rate,
    /// chapters), named in mpd's style (``Command/namesNotInMPD``).
    static let ownRows: [Entry] = locationEntries + loudnessEntries + sleepEntries + paceEntries + chapterEntries

    /// The rows by name.
    static let entries: [String: Entry] = Dictionary(uniqueKeysWithValues: rows.map { ($0.name, $0) })

    /// The rows by ``Command/Kind``'s raw value: every kind has exactly one row.
    private static let rowsByKind: [Entry] = {
        var byKind = [Entry?](repeating: nil, count: Command.Kind.allCases.count)
        for row in rows {
            precondition(byKind[row.kind.rawValue] == nil, "two rows for the command kind \(row.kind)")
            byKind[row.kind.rawValue] = row
        }
        return Command.Kind.allCases.map { kind in
            guard let row = byKind[kind.rawValue] else { preconditionFailure("no row for the command kind \(kind)") }
            return row
        }
    }()

    /// The row of the commands of one kind.
    static func row(_ kind: Command.Kind) -> Entry { rowsByKind[kind.rawValue] }

    /// What the command `name` needs: its row's permission; for a command of mpd's table this
    /// daemon does not implement, mpd's (``unimplementedPermissions``); ``Permission/admin`` for
    /// any other name (nothing unknown is let through by a missing row).
    static func permission(named name: String) -> Permission {
        entries[name]?.permission ?? unimplementedPermissions[name] ?? .admin
    }

    static let listedNames: [String] = rows.filter { !$0.traits.contains(.unlisted) }.map(\.name).sorted()

    /// A command a line of just its name stands for, and what it needs.
    struct Argumentless: Sendable {
        let command: Command
        let permission: Permission
    }

    /// The commands a line of just their name stands for (`ping`, `status`, ...): such a
    /// line needs no tokenizing, no strings and no table lookup by string. Clients send them
    /// by the thousand (keep-alive pings, polling), in lists up to 2 MiB long.
    private static let argumentless: [CommandName: Argumentless] = Dictionary(uniqueKeysWithValues: rows.compactMap { entry in
        do throws(MPDError) {
            let command = try command(entry, [])
            return CommandName(entry.name).map { ($0, Argumentless(command: command, permission: entry.permission)) }
        } catch {
            return nil
        }
    })

    /// The names of the rows with `trait`, by length (the index): a name is looked for among
    /// those of its length only.
    private static func namesByLength(with trait: Traits) -> [[[UInt8]]] {
        let names = Dictionary(grouping: rows.filter { $0.traits.contains(trait) }.map { Array($0.name.utf8) }, by: \.count)
        return (0...16).map { names[$0] ?? [] }
    }

    private static let protocolLevelNamesByLength = namesByLength(with: .session)
    private static let expensiveNamesByLength = namesByLength(with: .expensive)
    private static let playlistNamingNamesByLength = namesByLength(with: .namesPlaylists)

    /// Whether `name` is the name of a command the session answers itself (checked for
    /// every line of a list: no hashing, at most two comparisons of names of its length).
    static func isProtocolLevelName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(name, in: protocolLevelNamesByLength)
    }

    /// Whether `name` is the name of a command ``Command/isExpensive`` marks.
    static func isExpensiveName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(name, in: expensiveNamesByLength)
    }

    /// Whether `name` is the name of a command whose first argument may name a remote playlist.
    static func isPlaylistNamingName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(name, in: playlistNamingNamesByLength)
    }

    private static func contains(_ name: UnsafeBufferPointer<UInt8>, in namesByLength: [[[UInt8]]]) -> Bool {
        guard name.count < namesByLength.count else { return false }
        let candidates = namesByLength[name.count]
        var index = 0
        while index < candidates.count {
            if Bytes.equal(name, candidates[index]) { return true }
            index += 1
        }
        return false
    }

    /// The command a line consisting of exactly `name` stands for, if it takes no arguments.
    static func argumentlessCommand(named name: UnsafeBufferPointer<UInt8>) -> Argumentless? {
        guard let key = CommandName(name) else { return nil }
        return argumentless[key]
    }

    /// mpd's `command_check_request`, including its choice of message.
    private static func check(_ entry: Entry, count: Int) throws(MPDError) {
        guard case .between(let min, let max) = entry.arity else { return }
        let message: String
        if min == max, count != min {
            message = "wrong number of arguments for \"\(entry.name)\""
        } else if count < min {
            message = "too few arguments for \"\(entry.name)\""
        } else if let max, count > max {
            message = "too many arguments for \"\(entry.name)\""
        } else {
            return
        }
        throw MPDError(.argument, message, command: entry.name)
    }

    /// A row for a command without arguments, which is always `command`.
    static func simple(_ name: String, _ permission: Permission, _ command: Command, _ traits: Traits = []) -> Entry {
        Entry(kind: command.kind, name: name, arity: .exactly(0), permission: permission, traits: traits) { _, _ throws(MPDError) in
            command
        }
    }

    static func entry(
        _ kind: Command.Kind, _ name: String, _ arity: Arity, _ permission: Permission, _ traits: Traits = [],
        _ build: @escaping @Sendable ([String], ArgumentParsing) throws(MPDError) -> Command
    ) -> Entry {
        Entry(kind: kind, name: name, arity: arity, permission: permission, traits: traits, build: build)
    }

    /// The commands of the first protocol subset: transport, status, the basic queue and the session.
    private static let coreEntries: [Entry] = [
        // Playback
        entry(.play, "play", .between(0, 1), .player) { arguments, parse throws(MPDError) in
            guard let text = arguments.first else { return .play(position: nil) }
            let position = try parse.integer(text)
            if position == -1 { return .play(position: nil) }  // mpd: -1 means "no position"
            guard position >= 0 else { throw MPDError.badSongIndex.attributed(to: parse.command) }
            return .play(position: position)
        },
        entry(.pause, "pause", .between(0, 1), .player) { arguments, parse throws(MPDError) in
            .pause(try arguments.first.map { text throws(MPDError) in try parse.boolean(text) })
        },
        simple("next", .player, .next),
        simple("previous", .player, .previous),
        simple("stop", .player, .stop),
        entry(.seekcur, "seekcur", .exactly(1), .player) { arguments, parse throws(MPDError) in
            let text = arguments[0]
            let seconds = try parse.float(text)
            if text.hasPrefix("+") || text.hasPrefix("-") {
                return seconds < 0 ? .seekcur(.backward(-seconds)) : .seekcur(.forward(seconds))
            }
            return .seekcur(.absolute(max(0, seconds)))
        },

        // Status
        simple("status", .read, .status),
        simple("currentsong", .read, .currentsong),

        // Queue
        entry(.playlistinfo, "playlistinfo", .between(0, 1), .read, [.expensive, .listReply]) { arguments, parse throws(MPDError) in
            .playlistinfo(try arguments.first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry(.add, "add", .between(1, 2), .add, [.expensive]) { arguments, parse throws(MPDError) in
            .add(uri: arguments[0] == "/" ? "" : arguments[0], position: try position(arguments.dropFirst().first, parse))
        },
        simple("clear", .player, .clear),
        entry(.delete, "delete", .exactly(1), .player) { arguments, parse throws(MPDError) in
            .delete(try parse.range(arguments[0]))
        },

        // Options and volume
        entry(.setvol, "setvol", .exactly(1), .player) { arguments, parse throws(MPDError) in
            .setvol(try parse.unsigned(arguments[0], maximum: 100))
        },
        entry(.repeat, "repeat", .exactly(1), .player) { arguments, parse throws(MPDError) in .repeat(try parse.boolean(arguments[0])) },
        entry(.random, "random", .exactly(1), .player) { arguments, parse throws(MPDError) in .random(try parse.boolean(arguments[0])) },
        entry(.consume, "consume", .exactly(1), .player) { arguments, parse throws(MPDError) in
            guard let mode = ConsumeMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized consume mode, expected 0, 1, or oneshot", command: parse.command)
            }
            return .consume(mode)
        },
        entry(.single, "single", .exactly(1), .player) { arguments, parse throws(MPDError) in
            guard let mode = SingleMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized single mode, expected 0, 1, or oneshot", command: parse.command)
            }
            return .single(mode)
        },

        // Outputs and library
        simple("outputs", .read, .outputs, [.listReply]),
        entry(.enableoutput, "enableoutput", .exactly(1), .admin) { arguments, parse throws(MPDError) in
            .enableoutput(try parse.unsigned(arguments[0]))
        },
        entry(.disableoutput, "disableoutput", .exactly(1), .admin) { arguments, parse throws(MPDError) in
            .disableoutput(try parse.unsigned(arguments[0]))
        },
        entry(.toggleoutput, "toggleoutput", .exactly(1), .admin) { arguments, parse throws(MPDError) in
            .toggleoutput(try parse.unsigned(arguments[0]))
        },
        entry(.update, "update", .between(0, 1), .control, [.expensive]) { arguments, parse throws(MPDError) in
            guard let uri = arguments.first, !uri.isEmpty, uri != "/" else { return .update(uri: nil) }
            guard LocalURI.isSafe(uri) else { throw MPDError(.argument, "Malformed path", command: parse.command) }
            return .update(uri: uri)
        },
        simple("config", .admin, .config),

        // Session
        simple("ping", [], .ping, [.session]),
        entry(.close, "close", .unchecked, [], [.session, .notOverWebSocket]) { _, _ throws(MPDError) in .close },
        simple("commands", [], .commands, [.session, .listReply]),
        simple("notcommands", [], .notcommands, [.session, .listReply]),
        entry(.tagtypes, "tagtypes", .between(0, nil), [], [.session, .listReply]) { arguments, parse throws(MPDError) in
            .tagtypes(try TagTypesParsing.request(arguments, parse))
        },
        entry(.idle, "idle", .between(0, nil), .read, [.session, .notOverWebSocket]) { arguments, parse throws(MPDError) in
            .idle(try arguments.map { name throws(MPDError) in
                guard let subsystem = Subsystem(protocolName: name) else {
                    throw MPDError(.argument, "Unrecognized idle event: \(name)", command: parse.command)
                }
                return subsystem
            })
        },
        // Not in mpd's table: mpd only knows the exact line `noidle`, so `noidle x` is unknown.
        entry(.noidle, "noidle", .unchecked, [], [.session, .unlisted, .notOverWebSocket]) { arguments, _ throws(MPDError) in
            guard arguments.isEmpty else { throw MPDError(.unknown, "unknown command \"noidle\"") }
            return .noidle
        },
        entry(.binarylimit, "binarylimit", .exactly(1), [], [.session]) { arguments, parse throws(MPDError) in
            // mpd: at most the output buffer (8 MiB by default) minus 4 KiB, at least 64.
            let limit = try parse.unsigned(arguments[0], maximum: 8 * 1024 * 1024 - 4096)
            guard limit >= 64 else { throw MPDError(.argument, "Value too small", command: parse.command) }
            return .binarylimit(limit)
        },
    ]
}

/// A command name of at most 16 bytes packed into two integers: a key that is cheap to
/// make from a line's bytes and to hash.
struct CommandName: Hashable, Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private let count: Int

    /// nil if `bytes` is empty or longer than any command name.
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty, bytes.count <= 16 else { return nil }
        count = bytes.count
        var index = 0
        var shift: UInt64 = 0
        while index < count {
            let byte = UInt64(bytes[index])
            if shift < 64 { low |= byte &<< shift } else { high |= byte &<< (shift &- 64) }
            shift &+= 8
            index += 1
        }
    }

    init?(_ name: String) {
        guard let key = Array(name.utf8).withUnsafeBufferPointer({ CommandName($0) }) else { return nil }
        self = key
    }
}

/// mpd's `uri_safe_local`: no empty segments, no `.` or `..` segments, not absolute.
enum LocalURI {
    static func isSafe(_ uri: String) -> Bool {
        uri.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            !(segment.count <= 2 && segment.allSatisfy { $0 == "." })
        }
    }
}

/// The sub-commands of `tagtypes`, with mpd's error texts.
enum TagTypesParsing {
    static func request(_ arguments: [String], _ parse: ArgumentParsing) throws(MPDError) -> TagTypesRequest {
        let error = { (message: String) in MPDError(.argument, message, command: parse.command) }
        guard let sub = arguments.first else { return .list }
        let names = arguments.dropFirst()
        switch sub {
        case "all", "clear":
            guard names.isEmpty else { throw error("Too many arguments") }
            return sub == "all" ? .all : .clear
        case "enable":
            return .enable(try tags(names, error))
        case "disable":
            return .disable(try tags(names, error))
        default:
            throw error("Unknown sub command")
        }
    }

    private static func tags(_ names: ArraySlice<String>, _ error: (String) -> MPDError) throws(MPDError) -> Set<TagType> {
        guard !names.isEmpty else { throw error("Not enough arguments") }
        var result = Set<TagType>()
        for name in names {
            if let tag = TagType(protocolName: name) {
                result.insert(tag)
            } else if !TagType.knownButDisabledNames.contains(where: { ASCII.equalsIgnoringCase($0, name) }) {
                throw error("Unknown tag type")
            }
        }
        return result
    }
}

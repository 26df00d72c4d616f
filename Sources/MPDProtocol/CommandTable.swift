/// mpd's command table, restricted to what this daemon supports: name, argument count
/// limits, and how to type the arguments.
enum CommandTable {
    /// How many arguments a command takes; mirrors `min`/`max` in mpd's `AllCommands.cxx`.
    enum Arity {
        /// mpd's `-1, -1`: any number, not checked (`close`).
        case unchecked
        /// At least `min`, at most `max` (`nil`: no upper limit).
        case between(Int, Int?)

        static func exactly(_ count: Int) -> Arity { .between(count, count) }
    }

    struct Entry: Sendable {
        let name: String
        let arity: Arity
        /// Whether `commands` lists it (mpd's table has no `noidle`).
        let isListed: Bool
        let build: @Sendable (_ arguments: [String], _ parse: ArgumentParsing) throws(MPDError) -> Command
    }

    static func command(for request: Request) throws(MPDError) -> Command {
        guard let entry = entries[request.name] else {
            throw MPDError(.unknown, "unknown command \"\(request.name)\"")
        }
        try check(entry, count: request.arguments.count)
        return try entry.build(request.arguments, ArgumentParsing(command: entry.name))
    }

    static let listedNames: [String] = entries.values.filter(\.isListed).map(\.name).sorted()

    /// The commands a line of just their name stands for (`ping`, `status`, ...): such a
    /// line needs no tokenizing, no strings and no table lookup by string. Clients send them
    /// by the thousand (keep-alive pings, polling), in lists up to 2 MiB long.
    private static let argumentless: [CommandName: Command] = Dictionary(uniqueKeysWithValues: entries.values.compactMap { entry in
        do throws(MPDError) {
            try check(entry, count: 0)
            let command = try entry.build([], ArgumentParsing(command: entry.name))
            return CommandName(entry.name).map { ($0, command) }
        } catch {
            return nil
        }
    })

    /// The names of the commands ``Command/isHandledBySession`` marks, by length: a command
    /// list whose lines all start with one of them never needs the daemon.
    private static let protocolLevelNames: [Int: [[UInt8]]] = Dictionary(grouping:
        ["ping", "close", "commands", "notcommands", "tagtypes", "idle", "noidle", "binarylimit"].map { Array($0.utf8) },
        by: \.count)
    private static let protocolLevelNamesByLength: [[[UInt8]]] = (0...16).map { protocolLevelNames[$0] ?? [] }

    /// Whether `name` is the name of a command the session answers itself (checked for
    /// every line of a list: no hashing, at most two comparisons of names of its length).
    static func isProtocolLevelName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(name, in: protocolLevelNamesByLength)
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

    private static let expensiveNamesByLength: [[[UInt8]]] = {
        let names = Dictionary(grouping: Command.expensiveNames.map { Array($0.utf8) }, by: \.count)
        return (0...16).map { names[$0] ?? [] }
    }()

    /// Whether `name` is the name of a command ``Command/isExpensive`` marks.
    static func isExpensiveName(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(name, in: expensiveNamesByLength)
    }

    /// The command a line consisting of exactly `name` stands for, if it takes no arguments.
    static func argumentlessCommand(named name: UnsafeBufferPointer<UInt8>) -> Command? {
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

    static func simple(_ name: String, _ command: Command) -> Entry {
        Entry(name: name, arity: .exactly(0), isListed: true) { _, _ throws(MPDError) in command }
    }

    static func entry(
        _ name: String, _ arity: Arity,
        _ build: @escaping @Sendable ([String], ArgumentParsing) throws(MPDError) -> Command
    ) -> Entry {
        Entry(name: name, arity: arity, isListed: true, build: build)
    }

    static let entries: [String: Entry] = Dictionary(
        uniqueKeysWithValues: (coreEntries + queueEntries + optionEntries + messageEntries + playlistEntries + databaseEntries
                              + clientEntries + locationEntries + stickerEntries).map { ($0.name, $0) })

    /// The commands of the first protocol subset: transport, status, the basic queue and the session.
    private static let coreEntries: [Entry] = [
        // Playback
        entry("play", .between(0, 1)) { arguments, parse throws(MPDError) in
            guard let text = arguments.first else { return .play(position: nil) }
            let position = try parse.integer(text)
            if position == -1 { return .play(position: nil) }  // mpd: -1 means "no position"
            guard position >= 0 else { throw MPDError.badSongIndex.attributed(to: "play") }
            return .play(position: position)
        },
        entry("pause", .between(0, 1)) { arguments, parse throws(MPDError) in
            .pause(try arguments.first.map { text throws(MPDError) in try parse.boolean(text) })
        },
        simple("next", .next),
        simple("previous", .previous),
        simple("stop", .stop),
        entry("seekcur", .exactly(1)) { arguments, parse throws(MPDError) in
            let text = arguments[0]
            let seconds = try parse.float(text)
            if text.hasPrefix("+") || text.hasPrefix("-") {
                return seconds < 0 ? .seekcur(.backward(-seconds)) : .seekcur(.forward(seconds))
            }
            return .seekcur(.absolute(max(0, seconds)))
        },

        // Status
        simple("status", .status),
        simple("currentsong", .currentsong),

        // Queue
        entry("playlistinfo", .between(0, 1)) { arguments, parse throws(MPDError) in
            .playlistinfo(try arguments.first.map { text throws(MPDError) in try parse.range(text) } ?? .all)
        },
        entry("add", .between(1, 2)) { arguments, parse throws(MPDError) in
            .add(uri: arguments[0] == "/" ? "" : arguments[0], position: try position(arguments.dropFirst().first, parse))
        },
        simple("clear", .clear),
        entry("delete", .exactly(1)) { arguments, parse throws(MPDError) in
            .delete(try parse.range(arguments[0]))
        },

        // Options and volume
        entry("setvol", .exactly(1)) { arguments, parse throws(MPDError) in
            .setvol(try parse.unsigned(arguments[0], maximum: 100))
        },
        entry("repeat", .exactly(1)) { arguments, parse throws(MPDError) in .repeat(try parse.boolean(arguments[0])) },
        entry("random", .exactly(1)) { arguments, parse throws(MPDError) in .random(try parse.boolean(arguments[0])) },
        entry("consume", .exactly(1)) { arguments, _ throws(MPDError) in
            guard let mode = ConsumeMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized consume mode, expected 0, 1, or oneshot", command: "consume")
            }
            return .consume(mode)
        },
        entry("single", .exactly(1)) { arguments, _ throws(MPDError) in
            guard let mode = SingleMode(rawValue: arguments[0]) else {
                throw MPDError(.argument, "Unrecognized single mode, expected 0, 1, or oneshot", command: "single")
            }
            return .single(mode)
        },

        // Outputs and library
        simple("outputs", .outputs),
        entry("enableoutput", .exactly(1)) { arguments, parse throws(MPDError) in
            .enableoutput(try parse.unsigned(arguments[0]))
        },
        entry("disableoutput", .exactly(1)) { arguments, parse throws(MPDError) in
            .disableoutput(try parse.unsigned(arguments[0]))
        },
        entry("toggleoutput", .exactly(1)) { arguments, parse throws(MPDError) in
            .toggleoutput(try parse.unsigned(arguments[0]))
        },
        entry("update", .between(0, 1)) { arguments, _ throws(MPDError) in
            guard let uri = arguments.first, !uri.isEmpty, uri != "/" else { return .update(uri: nil) }
            guard LocalURI.isSafe(uri) else { throw MPDError(.argument, "Malformed path", command: "update") }
            return .update(uri: uri)
        },
        simple("config", .config),

        // Session
        simple("ping", .ping),
        Entry(name: "close", arity: .unchecked, isListed: true) { _, _ throws(MPDError) in .close },
        simple("commands", .commands),
        simple("notcommands", .notcommands),
        entry("tagtypes", .between(0, nil)) { arguments, _ throws(MPDError) in
            .tagtypes(try TagTypesParsing.request(arguments))
        },
        entry("idle", .between(0, nil)) { arguments, _ throws(MPDError) in
            .idle(try arguments.map { name throws(MPDError) in
                guard let subsystem = Subsystem(protocolName: name) else {
                    throw MPDError(.argument, "Unrecognized idle event: \(name)", command: "idle")
                }
                return subsystem
            })
        },
        // Not in mpd's table: mpd only knows the exact line `noidle`, so `noidle x` is unknown.
        Entry(name: "noidle", arity: .unchecked, isListed: false) { arguments, _ throws(MPDError) in
            guard arguments.isEmpty else { throw MPDError(.unknown, "unknown command \"noidle\"") }
            return .noidle
        },
        entry("binarylimit", .exactly(1)) { arguments, parse throws(MPDError) in
            // mpd: at most the output buffer (8 MiB by default) minus 4 KiB, at least 64.
            let limit = try parse.unsigned(arguments[0], maximum: 8 * 1024 * 1024 - 4096)
            guard limit >= 64 else { throw MPDError(.argument, "Value too small", command: "binarylimit") }
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
    static func request(_ arguments: [String]) throws(MPDError) -> TagTypesRequest {
        guard let sub = arguments.first else { return .list }
        let names = arguments.dropFirst()
        switch sub {
        case "all", "clear":
            guard names.isEmpty else { throw error("Too many arguments") }
            return sub == "all" ? .all : .clear
        case "enable":
            return .enable(try tags(names))
        case "disable":
            return .disable(try tags(names))
        default:
            throw error("Unknown sub command")
        }
    }

    private static func tags(_ names: ArraySlice<String>) throws(MPDError) -> Set<TagType> {
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

    private static func error(_ message: String) -> MPDError {
        MPDError(.argument, message, command: "tagtypes")
    }
}

import MPDProtocol
import Testing

/// The command table is the one place a command is declared (its name, arguments, permission
/// and traits); what depends on a command is read from it. These tests check the rows against
/// mpd and against what the rest of the protocol layer says of a command.
@Suite struct CommandTableTests {
    /// mpd 0.23's table (`src/command/AllCommands.cxx`): every command, by the permission it
    /// asks for, including those this daemon does not implement.
    static let mpdPermissions: [(Permission, [String])] = [
        (Permission(), [
            "binarylimit", "close", "commands", "notcommands", "password", "ping", "tagtypes",
        ]),
        (.read, [
            "albumart", "channels", "count", "currentsong", "decoders", "find", "getfingerprint", "getvol",
            "idle", "list", "listall", "listallinfo", "listfiles", "listmounts", "listneighbors",
            "listpartitions", "listplaylist", "listplaylistinfo", "listplaylists", "lsinfo", "outputs",
            "partition", "playlist", "playlistfind", "playlistid", "playlistinfo", "playlistsearch",
            "plchanges", "plchangesposid", "readcomments", "readmessages", "readpicture", "replay_gain_status",
            "search", "stats", "status", "subscribe", "unsubscribe", "urlhandlers",
        ]),
        (.add, [
            "add", "addid", "addtagid", "cleartagid", "findadd", "load", "rangeid", "searchadd",
        ]),
        (.player, [
            "clear", "clearerror", "consume", "crossfade", "delete", "deleteid", "mixrampdb", "mixrampdelay",
            "move", "moveid", "next", "pause", "play", "playid", "previous", "prio", "prioid", "random",
            "repeat", "replay_gain_mode", "seek", "seekcur", "seekid", "setvol", "shuffle", "single", "stop",
            "swap", "swapid", "volume",
        ]),
        (.control, [
            "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "rename", "rescan", "rm", "save",
            "searchaddpl", "sendmessage", "update",
        ]),
        (.admin, [
            "config", "delpartition", "disableoutput", "enableoutput", "kill", "mount", "moveoutput",
            "newpartition", "outputset", "sticker", "toggleoutput", "unmount",
        ]),
    ]

    @Test func everyCommandOfMPDsTableAsksForMPDsPermission() {
        var names: Set<String> = []
        for (permission, group) in Self.mpdPermissions {
            for name in group {
                names.insert(name)
                #expect(Permission.required(forCommandNamed: name) == permission, "\(name)")
            }
        }
        // Every command this daemon implements is mpd's, but for its own and `noidle`.
        #expect(Set(Command.Kind.allCases.map(\.name)).subtracting(names) == Command.namesNotInMPD.union(["noidle"]))
        #expect(Permission.required(forCommandNamed: "frobnicate") == .admin)
    }

    @Test func theDaemonsOwnCommandsAskForWhatTheirRowsSay() {
        for name in ["location", "locations", "regions", "loudness"] {
            #expect(Permission.required(forCommandNamed: name) == .read, "\(name)")
        }
        for name in ["locationupdates", "locationaccuracy", "locationdistance", "loudnessscan", "rate", "pitchalgorithm", "skipsilence"] {
            #expect(Permission.required(forCommandNamed: name) == .player, "\(name)")
        }
        #expect(Permission.required(forCommandNamed: "noidle") == [])
    }

    /// Each kind has its own name, its permission is the one asked for by name, and `commands`
    /// lists every kind but `noidle`.
    @Test func eachKindHasOneRow() {
        let names = Command.Kind.allCases.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(names).subtracting(Command.supportedNames) == ["noidle"])
        #expect(Set(Command.supportedNames).isSubset(of: Set(names)))
        for kind in Command.Kind.allCases {
            #expect(Permission.required(forCommandNamed: kind.name) == kind.permission, "\(kind.name)")
        }
    }

    /// A line of each command builds a command of the kind its name is the row of.
    @Test(arguments: ExpensiveMarkAgreementTests.examples.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) }
          + [("ping", "ping"), ("close", "close"), ("commands", "commands"), ("notcommands", "notcommands"),
             ("tagtypes", "tagtypes clear"), ("idle", "idle player"), ("noidle", "noidle"), ("binarylimit", "binarylimit 64")])
    func aLineBuildsTheCommandOfItsRow(name: String, line: String) throws {
        let command = try parse(line).get()
        #expect(command.name == name)
        #expect(command.kind.name == name)
    }

    @Test func theSessionsCommandsAreTheRowsThatSaySo() {
        #expect(Set(Command.Kind.allCases.filter(\.isHandledBySession).map(\.name))
            == ["ping", "close", "commands", "notcommands", "tagtypes", "idle", "noidle", "binarylimit"])
        #expect(Command.namesNotTakenOverWebSocket
            == ["idle", "noidle", "close", "command_list_begin", "command_list_ok_begin", "command_list_end"])
    }

    @Test func theExpensiveCommandsAreTheRowsThatSaySo() {
        #expect(Set(Command.Kind.allCases.filter(\.isExpensive).map(\.name)) == [
            "playlistinfo", "add", "update", "rescan", "playlistid", "plchanges", "playlistfind", "playlistsearch",
            "lsinfo", "listall", "listallinfo", "listfiles", "list", "find", "search", "findadd", "searchadd", "count",
            "stats", "load", "listplaylistinfo", "albumart", "readpicture", "playlist", "searchaddpl", "readcomments",
            "sticker", "loudnessscan", "inprogress",
            "chapters",
        ])
    }

    @Test func theListRepliesAreTheRowsThatSaySo() {
        let lists = Set(Command.Kind.allCases.map(\.name).filter(Command.repliesWithList(named:)))
        #expect(lists == [
            "playlistinfo", "playlistid", "playlistfind", "playlistsearch", "plchanges", "plchangesposid",
            "outputs", "listplaylists", "listplaylist", "listplaylistinfo", "lsinfo", "listall", "listallinfo",
            "listfiles", "find", "search", "list", "commands", "notcommands", "tagtypes", "decoders",
            "urlhandlers", "channels", "readmessages", "playlist", "inprogress",
            "chapters",
        ])
        #expect(!Command.repliesWithList(named: "status") && !Command.repliesWithList(named: "frobnicate"))
    }
}

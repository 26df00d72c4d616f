/// The permission each command of mpd 0.23's table asks for (`src/command/AllCommands.cxx`,
/// the second column), including commands this daemon does not implement, so that a
/// command added later needs no second decision. `noidle` is not in mpd's table: it is taken
/// before any check, as in mpd.
enum CommandPermissions {
    static let table: [String: Permission] = {
        let none: Permission = []
        var table: [String: Permission] = [:]
        for name in ["binarylimit", "close", "commands", "notcommands", "password", "ping", "tagtypes",
                     "noidle"] {
            table[name] = none
        }
        for name in ["albumart", "channels", "count", "currentsong", "decoders", "find", "getfingerprint",
                     "getvol", "idle", "list", "listall", "listallinfo", "listfiles", "listmounts",
                     "listneighbors", "listpartitions", "listplaylist", "listplaylistinfo", "listplaylists",
                     "lsinfo", "outputs", "partition", "playlist", "playlistfind", "playlistid", "playlistinfo",
                     "playlistsearch", "plchanges", "plchangesposid", "readcomments", "readmessages",
                     "readpicture", "replay_gain_status", "search", "stats", "status", "subscribe",
                     "unsubscribe", "urlhandlers"] {
            table[name] = .read
        }
        for name in ["add", "addid", "addtagid", "cleartagid", "findadd", "load", "rangeid", "searchadd"] {
            table[name] = .add
        }
        for name in ["clear", "clearerror", "consume", "crossfade", "delete", "deleteid", "mixrampdb",
                     "mixrampdelay", "move", "moveid", "next", "pause", "play", "playid", "previous", "prio",
                     "prioid", "random", "repeat", "replay_gain_mode", "seek", "seekcur", "seekid", "setvol",
                     "shuffle", "single", "stop", "swap", "swapid", "volume"] {
            table[name] = .player
        }
        for name in ["playlistadd", "playlistclear", "playlistdelete", "playlistmove", "rename", "rescan", "rm",
                     "save", "searchaddpl", "sendmessage", "update"] {
            table[name] = .control
        }
        // This daemon's own commands, not in mpd's table (issue 30): reading where it is, as
        // `status` is read; changing how it listens, as a player setting is changed.
        for name in ["location", "locations", "regions"] {
            table[name] = .read
        }
        for name in ["locationupdates", "locationaccuracy", "locationdistance"] {
            table[name] = .player
        }
        for name in ["config", "delpartition", "disableoutput", "enableoutput", "kill", "mount", "moveoutput",
                     "newpartition", "outputset", "sticker", "toggleoutput", "unmount"] {
            table[name] = .admin
        }
        return table
    }()
}

import MPDProtocol
import Testing

@Suite struct CommandParsingTests {
    // MARK: The ACK texts observed from mpd 0.23.12 (34-raw-errors.txt, fact sheet §3)

    @Test func unknownCommand() {
        #expect(ack("frobnicate") == "ACK [5@0] {} unknown command \"frobnicate\"\n")
        #expect(ack("frobnicate with args") == "ACK [5@0] {} unknown command \"frobnicate\"\n")
        #expect(ack("command_list_end") == "ACK [5@0] {} unknown command \"command_list_end\"\n")
        #expect(ack("noidle extra") == "ACK [5@0] {} unknown command \"noidle\"\n")
    }

    @Test func observedArgumentErrors() {
        #expect(ack("play abc") == "ACK [2@0] {play} Integer expected: abc\n")
        #expect(ack("play -5") == "ACK [2@0] {play} Bad song index\n")
        #expect(ack("status extra") == "ACK [2@0] {status} wrong number of arguments for \"status\"\n")
        #expect(ack("setvol 200") == "ACK [2@0] {setvol} Number too large: 200\n")
        #expect(ack("setvol") == "ACK [2@0] {setvol} wrong number of arguments for \"setvol\"\n")
        #expect(ack("seekcur \"abc\"") == "ACK [2@0] {seekcur} Float expected: abc\n")
        #expect(ack("pause 5") == "ACK [2@0] {pause} Boolean (0/1) expected: 5\n")
        #expect(ack("repeat 2") == "ACK [2@0] {repeat} Boolean (0/1) expected: 2\n")
        #expect(ack("idle bogus") == "ACK [2@0] {idle} Unrecognized idle event: bogus\n")
        #expect(ack("idle queue") == "ACK [2@0] {idle} Unrecognized idle event: queue\n")
        #expect(ack("idle player bogus") == "ACK [2@0] {idle} Unrecognized idle event: bogus\n")
        #expect(ack("binarylimit 10") == "ACK [2@0] {binarylimit} Value too small\n")
    }

    @Test func argumentCountMessagesFollowMPDsTable() throws {
        #expect(ack("play 1 2") == "ACK [2@0] {play} too many arguments for \"play\"\n")
        #expect(ack("pause 1 0") == "ACK [2@0] {pause} too many arguments for \"pause\"\n")
        #expect(ack("add") == "ACK [2@0] {add} too few arguments for \"add\"\n")
        #expect(ack("add a b c") == "ACK [2@0] {add} too many arguments for \"add\"\n")
        #expect(ack("seekcur") == "ACK [2@0] {seekcur} wrong number of arguments for \"seekcur\"\n")
        #expect(ack("delete") == "ACK [2@0] {delete} wrong number of arguments for \"delete\"\n")
        #expect(ack("ping x") == "ACK [2@0] {ping} wrong number of arguments for \"ping\"\n")
        #expect(ack("playlistinfo 1 2") == "ACK [2@0] {playlistinfo} too many arguments for \"playlistinfo\"\n")
        #expect(ack("update a b") == "ACK [2@0] {update} too many arguments for \"update\"\n")
        #expect(ack("enableoutput") == "ACK [2@0] {enableoutput} wrong number of arguments for \"enableoutput\"\n")
        // close is never checked.
        #expect(try parse("close whatever").get() == .close)
    }

    // MARK: Typed arguments

    @Test func play() throws {
        #expect(try parse("play").get() == .play(position: nil))
        #expect(try parse("play \"2\"").get() == .play(position: 2))
        #expect(try parse("play 0").get() == .play(position: 0))
        #expect(try parse("play -1").get() == .play(position: nil))
        #expect(try parse("play +3").get() == .play(position: 3))
        #expect(ack("play 2147483648") == "ACK [2@0] {play} Number too large: 2147483648\n")
        #expect(ack("play 1.5") == "ACK [2@0] {play} Integer expected: 1.5\n")
        #expect(ack("play \"\"") == "ACK [2@0] {play} Integer expected: \n")
    }

    @Test func pauseAndOptions() throws {
        #expect(try parse("pause").get() == .pause(nil))
        #expect(try parse("pause \"1\"").get() == .pause(true))
        #expect(try parse("pause 0").get() == .pause(false))
        #expect(ack("pause abc") == "ACK [2@0] {pause} Boolean (0/1) expected: abc\n")
        #expect(try parse("repeat \"1\"").get() == .repeat(true))
        #expect(try parse("random \"0\"").get() == .random(false))
        #expect(try parse("consume \"1\"").get() == .consume(.on))
        #expect(try parse("single oneshot").get() == .single(.oneshot))
        #expect(try parse("single \"0\"").get() == .single(.off))
        #expect(ack("single 2") == "ACK [2@0] {single} Unrecognized single mode, expected 0, 1, or oneshot\n")
        #expect(try parse("setvol \"70\"").get() == .setvol(70))
        #expect(try parse("setvol 0").get() == .setvol(0))
        #expect(ack("setvol -5") == "ACK [2@0] {setvol} Number too large: -5\n")
        #expect(ack("setvol abc") == "ACK [2@0] {setvol} Integer expected: abc\n")
    }

    @Test func seekcur() throws {
        #expect(try parse("seekcur \"10\"").get() == .seekcur(.absolute(10)))
        #expect(try parse("seekcur \"1.5\"").get() == .seekcur(.absolute(1.5)))
        #expect(try parse("seekcur \"65\"").get() == .seekcur(.absolute(65)))
        #expect(try parse("seekcur \"+5\"").get() == .seekcur(.forward(5)))
        #expect(try parse("seekcur \"-3\"").get() == .seekcur(.backward(3)))
        #expect(try parse("seekcur -2.25").get() == .seekcur(.backward(2.25)))
        #expect(ack("seekcur 1x") == "ACK [2@0] {seekcur} Float expected: 1x\n")
        #expect(ack("seekcur +") == "ACK [2@0] {seekcur} Float expected: +\n")
        #expect(ack("seekcur nan") == "ACK [2@0] {seekcur} Float expected: nan\n")
        #expect(SeekTarget.backward(5).seconds(from: 3) == 0)
        #expect(SeekTarget.forward(5).seconds(from: 3) == 8)
        #expect(SeekTarget.absolute(7).seconds(from: 3) == 7)
    }

    @Test func queueCommands() throws {
        #expect(try parse("add \"track1.mp3\"").get() == .add(uri: "track1.mp3", position: nil))
        #expect(try parse("add \"\"").get() == .add(uri: "", position: nil))
        #expect(try parse("add /").get() == .add(uri: "", position: nil))
        #expect(try parse("clear").get() == .clear)
        #expect(try parse("delete \"0\"").get() == .delete(.single(0)))
        #expect(try parse("delete 1:3").get() == .delete(PositionRange(start: 1, end: 3)))
        #expect(try parse("delete 2:").get() == .delete(PositionRange(start: 2, end: nil)))
        #expect(try parse("delete -1").get() == .delete(.all))
        #expect(ack("delete abc") == "ACK [2@0] {delete} Integer or range expected: abc\n")
        #expect(ack("delete 1:x") == "ACK [2@0] {delete} Integer or range expected: 1:x\n")
        #expect(ack("delete -2") == "ACK [2@0] {delete} Number is negative: -2\n")
        #expect(ack("delete 1:-2") == "ACK [2@0] {delete} Number is negative: 1:-2\n")
        #expect(ack("delete 3:1") == "ACK [2@0] {delete} Malformed range: 3:1\n")
        #expect(try parse("playlistinfo").get() == .playlistinfo(.all))
        #expect(try parse("playlistinfo 3").get() == .playlistinfo(.single(3)))
        #expect(try parse("playlistinfo \"1:4\"").get() == .playlistinfo(PositionRange(start: 1, end: 4)))
        #expect(try parse("playlistinfo -1").get() == .playlistinfo(.all))
    }

    @Test func positionRangesResolveLikeMPD() throws {
        #expect(try PositionRange.all.positionsForListing(queueLength: 3) == 0..<3)
        #expect(try PositionRange.all.positionsForListing(queueLength: 0) == 0..<0)
        #expect(try PositionRange.single(3).positionsForListing(queueLength: 3) == 3..<3)
        #expect(throws: MPDError.badSongIndex) { try PositionRange.single(4).positionsForListing(queueLength: 3) }
        #expect(try PositionRange(start: 1, end: 99).positionsForListing(queueLength: 3) == 1..<3)
        #expect(try PositionRange.single(0).positionsForDeletion(queueLength: 5) == 0..<1)
        #expect(try PositionRange(start: 2, end: nil).positionsForDeletion(queueLength: 5) == 2..<5)
        #expect(throws: MPDError.badSongIndex) { try PositionRange.single(99).positionsForDeletion(queueLength: 5) }
        #expect(throws: MPDError.badSongIndex) { try PositionRange.all.positionsForDeletion(queueLength: 0) }
    }

    @Test func outputsAndLibrary() throws {
        #expect(try parse("outputs").get() == .outputs)
        #expect(try parse("enableoutput \"1\"").get() == .enableoutput(1))
        #expect(try parse("disableoutput 0").get() == .disableoutput(0))
        #expect(try parse("toggleoutput 1").get() == .toggleoutput(1))
        #expect(ack("toggleoutput") == "ACK [2@0] {toggleoutput} wrong number of arguments for \"toggleoutput\"\n")
        #expect(ack("enableoutput x") == "ACK [2@0] {enableoutput} Integer expected: x\n")
        #expect(ack("disableoutput -1") == "ACK [2@0] {disableoutput} Number too large: -1\n")
        #expect(try parse("update").get() == .update(uri: nil))
        #expect(try parse("update \"\"").get() == .update(uri: nil))
        #expect(try parse("update /").get() == .update(uri: nil))
        #expect(try parse("update \"sub/dir\"").get() == .update(uri: "sub/dir"))
        for bad in ["/abs", "../up", "a/./b", "a//b", "dir/"] {
            #expect(ack("update \"\(bad)\"") == "ACK [2@0] {update} Malformed path\n")
        }
        #expect(try parse("config").get() == .config)
    }

    @Test func idleSubsystems() throws {
        #expect(try parse("idle").get() == .idle([]))
        #expect(try parse("idle player mixer").get() == .idle([.player, .mixer]))
        #expect(try parse("idle \"database\"").get() == .idle([.database]))
        #expect(try parse("idle PLAYER Stored_Playlist").get() == .idle([.player, .storedPlaylist]))
        #expect(try parse("noidle").get() == .noidle)
        let all = Subsystem.allCases.map(\.protocolName)
        #expect(all == ["database", "stored_playlist", "playlist", "player", "mixer", "output", "options",
                        "sticker", "update", "subscription", "message", "neighbor", "mount", "partition", "location", "region",
                        "loudness"])
    }

    @Test func tagtypes() throws {
        #expect(try parse("tagtypes").get() == .tagtypes(.list))
        #expect(try parse("tagtypes \"clear\"").get() == .tagtypes(.clear))
        #expect(try parse("tagtypes all").get() == .tagtypes(.all))
        #expect(try parse("tagtypes enable Artist AlbumArtist Title Name Composer Performer").get()
            == .tagtypes(.enable([.artist, .albumArtist, .title, .name, .composer, .performer])))
        #expect(try parse("tagtypes disable artist musicbrainz_trackid").get()
            == .tagtypes(.disable([.artist, .musicBrainzTrackID])))
        #expect(try parse("tagtypes enable Comment").get() == .tagtypes(.enable([])))
        #expect(ack("tagtypes enable") == "ACK [2@0] {tagtypes} Not enough arguments\n")
        #expect(ack("tagtypes enable Artist Bogus") == "ACK [2@0] {tagtypes} Unknown tag type\n")
        #expect(ack("tagtypes clear Artist") == "ACK [2@0] {tagtypes} Too many arguments\n")
        #expect(ack("tagtypes frob") == "ACK [2@0] {tagtypes} Unknown sub command\n")
        #expect(ack("tagtypes Clear") == "ACK [2@0] {tagtypes} Unknown sub command\n")
    }

    @Test func simpleCommands() throws {
        let simple: [String: Command] = [
            "next": .next, "previous": .previous, "stop": .stop, "status": .status,
            "currentsong": .currentsong, "ping": .ping, "commands": .commands,
            "notcommands": .notcommands, "close": .close,
        ]
        for (line, command) in simple {
            #expect(try parse(line).get() == command)
            #expect(command.name == line)
        }
        #expect(try parse("binarylimit 8192").get() == .binarylimit(8192))
    }

    @Test func locationCommands() throws {
        #expect(try parse("location").get() == .location)
        #expect(try parse("locations").get() == .locations)
        #expect(try parse("regions").get() == .regions)
        #expect(try parse("locationupdates 0").get() == .locationupdates(.off))
        #expect(try parse("locationupdates 1").get() == .locationupdates(.on))
        #expect(try parse("locationupdates significant").get() == .locationupdates(.significant))
        #expect(ack("locationupdates yes") == "ACK [2@0] {locationupdates} Unrecognized location updates mode, expected 0, 1, or significant\n")
        #expect(try parse("locationaccuracy hundredMeters").get() == .locationaccuracy("hundredMeters"))
        #expect(try parse("locationdistance 25.5").get() == .locationdistance(25.5))
        #expect(try parse("locationdistance none").get() == .locationdistance(nil))
        #expect(try parse("locationdistance 0").get() == .locationdistance(nil))
        #expect(ack("locationdistance far") == "ACK [2@0] {locationdistance} Float expected: far\n")
        #expect(ack("locationdistance -1") == "ACK [2@0] {locationdistance} Expected metres (0 or more) or none: -1\n")
        #expect(ack("location now") == "ACK [2@0] {location} wrong number of arguments for \"location\"\n")
        #expect(try parse("idle location region").get() == .idle([.location, .region]))
    }

    @Test func chapterCommands() throws {
        #expect(try parse("chapters").get() == .chapters(uri: nil))
        #expect(try parse("chapters \"a b.mp3\"").get() == .chapters(uri: "a b.mp3"))
        #expect(try parse("seekchapter 2").get() == .seekchapter(.number(2)))
        #expect(try parse("seekchapter next").get() == .seekchapter(.next))
        #expect(try parse("seekchapter previous").get() == .seekchapter(.previous))
        for bad in ["abc", "0", "-1", "1.5", "+2", "9999999999", "NEXT", ""] {
            #expect(ack("seekchapter \"\(bad)\"")
                    == "ACK [2@0] {seekchapter} Expected a chapter number (1 or more), next or previous: \(bad)\n", "\(bad)")
        }
        #expect(ack("chapters a b") == "ACK [2@0] {chapters} too many arguments for \"chapters\"\n")
    }

    @Test func supportedNamesAreSortedAndComplete() {
        #expect(Command.supportedNames == [
            "add", "addid", "addtagid", "albumart", "binarylimit", "channels", "chapters", "clear", "clearerror", "cleartagid", "close",
            "commands", "config", "consume", "count",
            "crossfade", "currentsong", "decoders", "delete", "deleteid", "delpartition", "disableoutput", "enableoutput", "find",
            "findadd", "getvol", "idle", "inprogress", "kill", "list", "listall", "listallinfo", "listfiles", "listpartitions", "listplaylist",
            "listplaylistinfo", "listplaylists", "load", "location", "locationaccuracy", "locationdistance", "locations",
            "locationupdates", "loudness", "loudnessscan", "lsinfo", "mixrampdb", "mixrampdelay", "move", "moveid", "moveoutput", "newpartition",
            "next", "notcommands", "outputs", "outputset", "partition", "password", "pause", "ping", "pitchalgorithm", "play", "playid", "playlist",
            "playlistadd", "playlistclear", "playlistdelete", "playlistfind", "playlistid", "playlistinfo", "playlistmove",
            "playlistsearch", "plchanges", "plchangesposid", "previous", "prio", "prioid", "random", "rangeid", "rate", "readcomments",
            "readmessages", "readpicture",
            "regions", "rename", "repeat", "replay_gain_mode", "replay_gain_status", "rescan", "rm", "save", "search",
            "searchadd", "searchaddpl", "seek", "seekchapter", "seekcur", "seekid", "sendmessage", "setvol", "shuffle", "single", "skipsilence", "sleep", "stats",
            "status", "sticker", "stop", "subscribe", "swap", "swapid", "tagtypes", "toggleoutput", "unsubscribe", "update", "urlhandlers", "volume",
        ])
        for name in Command.supportedNames {
            if case .failure(let error) = parse(name) {
                #expect(error.code != .unknown, "\(name) must be in the table")
            }
        }
    }

    @Test func errorFormatting() {
        #expect(MPDError.notPlaying.attributed(to: "seekcur").ackLine() == "ACK [55@0] {seekcur} Not playing\n")
        #expect(MPDError.noSuchDirectory.attributed(to: "add").ackLine(index: 1) == "ACK [50@1] {add} No such directory\n")
        #expect(MPDError(.exist, "Playlist already exists", command: "save").ackLine() == "ACK [56@0] {save} Playlist already exists\n")
        #expect(MPDError(.system, "multi\nline", command: "x").ackLine() == "ACK [52@0] {x} multi line\n")
        #expect(ACKCode.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 50, 51, 52, 53, 54, 55, 56])
    }
}

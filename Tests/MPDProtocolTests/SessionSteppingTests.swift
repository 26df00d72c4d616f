import MPDProtocol
import Testing

/// ``ClientSession/step()``: a step at a time (a run of lines the session answers itself, or
/// one request that needs the daemon), so the connection can stop between steps
/// (backpressure) and run the daemon's commands on the daemon's queue.
@Suite struct SessionSteppingTests {
    @Test func oneRequestAtATime() {
        var session = ClientSession()
        let daemon = FakeDaemon()
        session.append("status\nping\nstatus\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(daemon.executed.isEmpty, "step() never runs the daemon's commands")
        #expect(transcript(session.runPending(executor: daemon)) == "volume: 100\nstate: stop\nOK\n")
        #expect(session.step() == .handled([.send("OK\n")]))
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(transcript(session.runPending(executor: daemon)) == "volume: 100\nstate: stop\nOK\n")
        #expect(session.step() == .needsInput)
        #expect(daemon.executed == [.status, .status])
    }

    /// The remote playlists a pending request names (`load`, `listplaylist`, `listplaylistinfo`
    /// with a URL), alone or in a command list, for the daemon to fetch before running it.
    @Test func pendingWorkNamesItsRemotePlaylists() {
        var session = ClientSession()
        session.append("load \"http://radio.example/a.m3u\" 0:1\nload local\nlistplaylistinfo https://x.example/b.pls\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == ["http://radio.example/a.m3u"])
        _ = session.runPending(executor: FakeDaemon())
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == [], "a stored playlist's name is no URL")
        _ = session.runPending(executor: FakeDaemon())
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == ["https://x.example/b.pls"])
        _ = session.runPending(executor: FakeDaemon())
        session.append("command_list_begin\nstatus\nlistplaylist http://c.example/c.m3u\nload mine\nload \"http://d.example/d.pls\"\ncommand_list_end\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == ["http://c.example/c.m3u", "http://d.example/d.pls"])
        _ = session.runPending(executor: FakeDaemon())
        session.append("command_list_ok_begin\nping\nlistplaylistinfo \"https://e.example/e.m3u\"\ncommand_list_end\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == ["https://e.example/e.m3u"])
        _ = session.runPending(executor: FakeDaemon())
        // A list that names no playlist is not parsed for one (the event loop asks).
        session.append("command_list_begin\nstatus\nping\nloadx http://f.example/f.m3u\ncommand_list_end\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.pendingPlaylistURLs == [])
    }

    /// Lines the session answers itself are taken together: one step for a run of `ping`s,
    /// its replies in one write; replies gathered before work that needs the daemon come first.
    @Test func linesTheSessionAnswersAreTakenTogether() {
        var session = ClientSession()
        session.append("ping\nping\nnoidle\nping\nstatus\nping\n".utf8)
        #expect(session.step() == .handled([.send("OK\nOK\nOK\n")]))
        #expect(session.hasPendingWork, "status was taken, and waits for the daemon")
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(transcript(session.runPending(executor: FakeDaemon())) == "volume: 100\nstate: stop\nOK\n")
        #expect(session.step() == .handled([.send("OK\n")]))
        #expect(session.step() == .needsInput)
    }

    /// A step gathers at most ``ClientSession/stepOutputLimit`` bytes of replies, so the
    /// connection can stop between steps when its client does not read (backpressure).
    @Test func aStepGathersBoundedReplies() {
        var session = ClientSession()
        let count = ClientSession.stepOutputLimit  // pings: three reply bytes each
        session.append(String(repeating: "ping\n", count: count).utf8)
        var replies = 0
        var steps = 0
        while case .handled(let actions) = session.step() {
            steps += 1
            for case .send(let text) in actions {
                #expect(text.utf8.count <= ClientSession.stepOutputLimit + 3)
                replies += text.utf8.count / 3
            }
        }
        #expect(replies == count)
        #expect(steps >= 3 && steps <= 4, "\(steps) steps")
    }

    /// ``ClientSession/step(answering:)``: what the daemon answers where the connection runs is
    /// answered in the step; the rest becomes pending work as before.
    @Test func commandsAnsweredInlineNeedNoExecutor() {
        var session = ClientSession()
        session.append("tagtypes disable Artist\nstatus\ncurrentsong\nstats\n".utf8)
        var seen: [(Command, CommandContext)] = []
        let step = session.step { command, context in
            seen.append((command, context))
            return command == .status ? "state: stop\n" : nil
        }
        #expect(step == .handled([.send("OK\nstate: stop\nOK\n")]))
        #expect(seen.map(\.0) == [.status, .currentsong])
        #expect(seen.first.map { !$0.1.tagTypes.contains(.artist) } == true, "the client's tag types are passed on")
        #expect(session.step() == .ready(needsExecutor: true), "currentsong was not answered: it waits for the daemon")
    }

    @Test func listLinesAreTakenInOneStepAndTheListRunsAsOne() {
        var session = ClientSession()
        session.append("command_list_ok_begin\nping\nstatus\nping\n".utf8)
        #expect(session.step() == .needsInput)
        #expect(session.isCollectingCommandList)
        session.append("command_list_end\nping\n".utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(transcript(session.runPending(executor: FakeDaemon()))
            == "list_OK\nvolume: 100\nstate: stop\nlist_OK\nlist_OK\nOK\n")
        #expect(session.step() == .handled([.send("OK\n")]))
    }

    /// A list of protocol-level commands only is run without the daemon (off its queue).
    @Test(arguments: ["ping", "close", "commands", "notcommands", "tagtypes", "tagtypes clear", "idle",
                      "idle player", "binarylimit 64", "ping 1", "close x"])
    func aListOfProtocolCommandsNeedsNoExecutor(line: String) {
        var session = ClientSession()
        session.append("command_list_begin\nping\n\(line)\ncommand_list_end\n".utf8)
        #expect(session.step() == .ready(needsExecutor: false))
        _ = session.runPending { command, _ throws(MPDError) in
            Issue.record("\(command) reached the executor")
            return .empty
        }
    }

    /// Every other command of the table makes the list need the daemon.
    @Test func everyDaemonCommandMakesTheListNeedTheExecutor() {
        let protocolLevel: Set = ["ping", "close", "commands", "notcommands", "tagtypes", "idle", "binarylimit"]
        let daemonCommands = Command.supportedNames.filter { !protocolLevel.contains($0) }
        #expect(daemonCommands.count >= 20)
        for name in daemonCommands + ["frobnicate", "pi!ng"] {
            var session = ClientSession()
            session.append("command_list_begin\nping\n\(name)\ncommand_list_end\n".utf8)
            #expect(session.step() == .ready(needsExecutor: true), "\(name)")
        }
    }

    /// A list that grows past the limit closes the connection at once, without a reply,
    /// and nothing after it is taken.
    @Test func aListPastTheLimitClosesAtOnce() {
        var session = ClientSession(maxCommandListSize: 1000)
        session.append(("command_list_begin\n" + String(repeating: "ping\n", count: 199)).utf8)
        #expect(session.step() == .needsInput)
        session.append("ping\nping\ncommand_list_end\nping\n".utf8)
        #expect(session.step() == .handled([.close]))
        #expect(session.isClosed)
        session.append("ping\n".utf8)
        #expect(session.step() == .needsInput)
    }

    /// Work whose cost grows with the queue or the library is marked, so the daemon can keep
    /// it from piling up ahead of cheap commands.
    @Test(arguments: [
        ("playlistinfo\n", true), ("playlistinfo 0:5\n", true), ("add \"\"\n", true), ("update\n", true),
        ("status\n", false), ("currentsong\n", false), ("play 1\n", false),
        ("command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\n", false),
        ("command_list_begin\nadd \"a.mp3\"\nadd \"b.mp3\"\ncommand_list_end\n", true),
        ("command_list_begin\nping\nstatus\nplaylistinfo\ncommand_list_end\n", true),
    ])
    func expensiveWorkIsMarked(input: String, isExpensive: Bool) {
        var session = ClientSession()
        session.append(input.utf8)
        #expect(session.step() == .ready(needsExecutor: true))
        #expect(session.isPendingWorkExpensive == isExpensive)
    }

    /// A list's lines are classified by their first word once per run of the same word: a
    /// word that differs only after a run (or only in length) is still looked at.
    @Test(arguments: [
        ("ping\nping\nping\n", false, false, false),
        ("ping\nping\nstatus\n", true, false, false),
        ("ping\npingx\n", true, false, false),
        ("status\nstatus\nplaylistinfo\n", true, true, false),
        ("add \"a.mp3\"\nadd \"b.mp3\"\nload \"http://radio.example/a.m3u\"\n", true, true, true),
        ("status\nstatus\nlistplaylist \"http://radio.example/a.m3u\"\n", true, false, true),
        ("status\nstatus\nstats\n", true, true, false),
    ])
    func aListsRepeatedCommandsAreClassifiedOnce(lines: String, needsExecutor: Bool, isExpensive: Bool,
                                                  namesPlaylists: Bool) {
        var session = ClientSession()
        session.append(("command_list_begin\n" + lines + "command_list_end\n").utf8)
        #expect(session.step() == .ready(needsExecutor: needsExecutor))
        #expect(session.isPendingWorkExpensive == isExpensive)
        #expect(!session.pendingPlaylistURLs.isEmpty == namesPlaylists)
    }
}

/// ``Command/isExpensive`` (a single command, typed, through its kind) and the list check by
/// name (``CommandTable``'s byte comparison, so a 2 MiB list is never parsed twice) read the
/// same rows by two paths: they must agree on every command the daemon executes.
@Suite struct ExpensiveMarkAgreementTests {
    /// One valid line per command the daemon executes; a new command needs one here.
    static let examples: [String: String] = [
        "add": "add \"a.mp3\"", "albumart": "albumart \"a.mp3\" 0", "readpicture": "readpicture \"a.mp3\" 8192", "addid": "addid \"a.mp3\" 0", "channels": "channels", "clear": "clear",
        "config": "config", "consume": "consume 1", "count": "count artist x", "crossfade": "crossfade 0",
        "currentsong": "currentsong", "decoders": "decoders", "delete": "delete 0:2", "deleteid": "deleteid 3",
        "disableoutput": "disableoutput 0", "enableoutput": "enableoutput 0", "toggleoutput": "toggleoutput 0", "find": "find \"(artist == 'x')\"",
        "findadd": "findadd artist x", "getvol": "getvol", "list": "list album group albumartist",
        "listall": "listall", "listallinfo": "listallinfo \"\"", "listfiles": "listfiles", "listpartitions": "listpartitions",
        "listplaylist": "listplaylist mix", "listplaylistinfo": "listplaylistinfo mix", "listplaylists": "listplaylists",
        "load": "load mix 0:2", "lsinfo": "lsinfo", "mixrampdb": "mixrampdb 0", "mixrampdelay": "mixrampdelay nan",
        "move": "move 0:2 3", "moveid": "moveid 1 0", "next": "next", "outputs": "outputs", "partition": "partition default", "password": "password s3cret",
        "pause": "pause 1", "play": "play 0", "playid": "playid 1", "playlistadd": "playlistadd mix \"a.mp3\"",
        "playlistclear": "playlistclear mix", "playlistdelete": "playlistdelete mix 0", "playlistfind": "playlistfind artist x",
        "playlistid": "playlistid 1", "playlistinfo": "playlistinfo 0:5", "playlistmove": "playlistmove mix 0 1",
        "playlistsearch": "playlistsearch any x", "plchanges": "plchanges 0", "plchangesposid": "plchangesposid 0",
        "previous": "previous", "prio": "prio 10 0:2", "prioid": "prioid 10 1", "random": "random 1",
        "readmessages": "readmessages", "rename": "rename mix mux", "repeat": "repeat 1", "replay_gain_mode": "replay_gain_mode off",
        "replay_gain_status": "replay_gain_status", "rescan": "rescan", "rm": "rm mix", "save": "save mix",
        "search": "search any x", "searchadd": "searchadd any x", "seek": "seek 0 1.5", "seekcur": "seekcur +1",
        "seekid": "seekid 1 2", "sendmessage": "sendmessage c m", "setvol": "setvol 50", "shuffle": "shuffle",
        "single": "single oneshot", "stats": "stats", "status": "status", "stop": "stop", "subscribe": "subscribe c",
        "swap": "swap 0 1", "swapid": "swapid 1 2", "unsubscribe": "unsubscribe c", "update": "update \"dir\"",
        "urlhandlers": "urlhandlers", "volume": "volume -5",
        "location": "location", "locations": "locations", "locationupdates": "locationupdates significant",
        "locationaccuracy": "locationaccuracy best", "locationdistance": "locationdistance 25.5", "regions": "regions",
        "rate": "rate 1.5", "pitchalgorithm": "pitchalgorithm varispeed", "skipsilence": "skipsilence 1",
        "loudnessscan": "loudnessscan \"a.mp3\"", "loudness": "loudness",
        "sleep": "sleep 1800", "inprogress": "inprogress", "chapters": "chapters", "seekchapter": "seekchapter next",
        "sticker": "sticker find song \"\" rating < 5",
        "clearerror": "clearerror", "readcomments": "readcomments \"a.mp3\"", "playlist": "playlist",
        "searchaddpl": "searchaddpl mix any x", "rangeid": "rangeid 1 1.5:", "addtagid": "addtagid 1 artist x",
        "cleartagid": "cleartagid 1", "kill": "kill", "outputset": "outputset 0 dop 1", "moveoutput": "moveoutput null",
        "newpartition": "newpartition p", "delpartition": "delpartition p",
    ]

    static let protocolLevel: Set = ["ping", "close", "commands", "notcommands", "tagtypes", "idle", "binarylimit"]

    @Test func everyExecutedCommandHasAnExample() {
        #expect(Set(Self.examples.keys) == Set(Command.supportedNames).subtracting(Self.protocolLevel))
    }

    @Test(arguments: examples.values.sorted())
    func aCommandAloneAndInAListAreMarkedAlike(line: String) {
        var alone = ClientSession()
        alone.append("\(line)\n".utf8)
        #expect(alone.step() == .ready(needsExecutor: true), "\(line) must parse")
        var listed = ClientSession()
        listed.append("command_list_begin\nping\n\(line)\ncommand_list_end\n".utf8)
        #expect(listed.step() == .ready(needsExecutor: true))
        #expect(alone.isPendingWorkExpensive == listed.isPendingWorkExpensive, "\(line)")
    }
}

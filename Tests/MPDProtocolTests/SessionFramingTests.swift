import MPDProtocol
import Testing

@Suite struct SessionFramingTests {
    /// Clients read the greeting as libmpdclient's `mpd_parse_welcome` does: one line,
    /// `OK MPD ` and a dotted version they then gate features on. The version announced
    /// must cover what the session answers: `binarylimit` exists from protocol 0.22.4 on,
    /// so a client told less would never send it, and a later version would promise
    /// commands (0.24's `playlistlength`, say) that this session does not know.
    @Test func greetingAnnouncesTheProtocolVersionTheSessionSpeaks() throws {
        let greeting = ClientSession.greeting
        #expect(greeting.hasSuffix("\n") && greeting.filter { $0 == "\n" }.count == 1)
        #expect(greeting.hasPrefix("OK MPD "))
        let parts = greeting.dropFirst("OK MPD ".count).dropLast().split(separator: ".", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { Int($0) }
        try #require(parts.count == 3 && numbers.count == 3, "not a dotted version: \(greeting)")
        #expect(numbers.lexicographicallyPrecedes([0, 22, 4]) == false, "binarylimit needs 0.22.4, announced \(numbers)")
        #expect(numbers.lexicographicallyPrecedes([0, 24, 0]), "0.24 would promise commands this session lacks")

        let session = TestClient(daemon: FakeDaemon())
        #expect(session.feed("binarylimit 8192\n") == "OK\n")
        #expect(session.feed("playlistlength \"x\"\n").hasPrefix("ACK [5@0]"))
    }

    @Test func simpleCommands() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("ping\n") == "OK\n")
        #expect(session.feed("play\n", daemon) == "OK\n")
        #expect(session.feed("pause \"1\"\n") == "OK\n")
        #expect(session.feed("update \"\"\n") == "updating_db: 2\nOK\n")
        #expect(session.feed("notcommands\n") == "OK\n")
        #expect(session.feed("binarylimit 8192\n") == "OK\n")
        #expect(daemon.executed == [.play(position: nil), .pause(true), .update(uri: nil)])
    }

    @Test func executorErrorsGetTheCommandName() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("play 99\n", daemon) == "ACK [2@0] {play} Bad song index\n")
        #expect(session.feed("seekcur \"10\"\n") == "ACK [55@0] {seekcur} Not playing\n")
        #expect(session.feed("next\n") == "ACK [55@0] {next} Not playing\n")
        #expect(session.feed("add \"nonexistent.mp3\"\n") == "ACK [50@0] {add} No such directory\n")
        #expect(session.feed("playlistinfo 5\n") == "ACK [2@0] {playlistinfo} Bad song index\n")
        // A closure works as an executor too, and a wrong name in the thrown error is corrected.
        let actions = session.receive("setvol 50\n") { _, _ throws(MPDError) in
            throw MPDError(.unknown, "No mixer", command: "wrong")
        }
        #expect(transcript(actions) == "ACK [5@0] {setvol} No mixer\n")
        #expect(session.feed("ping\n") == "OK\n")
    }

    @Test func sessionCommandsNeverReachTheExecutor() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        _ = session.feed("ping\ncommands\nnotcommands\ntagtypes\ntagtypes clear\nbinarylimit 100\nidle\nnoidle\nclose\n")
        #expect(daemon.executed.isEmpty)
        #expect(Command.ping.isHandledBySession && !Command.status.isHandledBySession)
    }

    @Test func commandsListsTheSupportedNames() {
        let session = TestClient()
        let reply = session.feed("commands\n")
        #expect(reply.hasPrefix("command: add\ncommand: addid\ncommand: addtagid\ncommand: albumart\ncommand: binarylimit\n"))
        #expect(reply.hasSuffix("command: update\ncommand: urlhandlers\ncommand: volume\nOK\n"))
        #expect(reply == Command.supportedNames.map { "command: \($0)\n" }.joined() + "OK\n")
        #expect(!reply.contains("noidle"))
    }

    @Test func pipelinedLinesInOneChunk() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("ping\nplay\nping\n") == "OK\nOK\nOK\n")
    }

    @Test func chunksSplitAnywhere() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("pi") == "")
        #expect(session.feed("ng\nsta") == "OK\n")
        #expect(session.feed("tus") == "")
        #expect(session.feed("\n") == "volume: 100\nstate: stop\nOK\n")
    }

    @Test func byteByByteEqualsAllAtOnce() {
        let input = "command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\nplay \"2\"\r\nping\n"
        let whole = TestClient()
        let expected = whole.feed(input)
        var trickle = ClientSession()
        let daemon = FakeDaemon()
        var received = ""
        for byte in input.utf8 {
            received += transcript(trickle.receive([byte], executor: daemon))
        }
        #expect(received == expected)
        #expect(received.hasSuffix("list_OK\nOK\nOK\nOK\n"))
    }

    @Test func crlfIsTolerated() {
        let session = TestClient()
        #expect(session.feed("ping\r\nping\n") == "OK\nOK\n")
        #expect(session.feed("idle\r\nnoidle\r\n") == "OK\n")
    }

    @Test func unclosedQuoteKeepsTheConnection() {
        let session = TestClient()
        #expect(session.feed("add \"track1.mp3\nping\n") == "ACK [5@0] {} Missing closing '\"'\nOK\n")
    }

    @Test func unknownCommandKeepsTheConnection() {
        let session = TestClient()
        #expect(session.feed("frobnicate\nping\n") == "ACK [5@0] {} unknown command \"frobnicate\"\nOK\n")
    }

    @Test(arguments: ["\n", "   \n", "STATUS\n", "Ping\n", " ping\n", "\r\n"])
    func malformedLinesCloseSilently(line: String) {
        let session = TestClient()
        #expect(session.feed(line + "ping\n") == "<close>")
        #expect(session.isClosed)
        #expect(session.feed("ping\n") == "")
    }

    @Test func linesBeforeAMalformedLineAreAnswered() {
        let session = TestClient()
        #expect(session.feed("ping\n\nping\n") == "OK\n<close>")
    }

    @Test func badCommandNameIsACKedThenClosed() {
        let session = TestClient()
        #expect(session.feed("pi!ng\nping\n") == "ACK [5@0] {} Invalid word character\n<close>")
    }

    @Test func closeClosesWithoutReply() {
        let session = TestClient()
        #expect(session.feed("ping\nclose\nping\n") == "OK\n<close>")
        #expect(session.receive("ping\n") { _, _ throws(MPDError) in .empty }.isEmpty)
    }

    @Test func lineLengthLimit() {
        let session = TestClient(maxLineLength: 16)
        let sixteen = "add \"track1.mp\""  // 15 bytes + 1 below
        #expect(session.feed(sixteen + " \n") == "OK\n")  // exactly 16 bytes before the newline
        #expect(session.feed("ping\n" + sixteen + "  \nping\n") == "OK\n<close>")  // 17 bytes
        #expect(session.isClosed)
    }

    @Test func anIncompleteLineOverTheLimitClosesAtOnce() {
        let session = TestClient(maxLineLength: 16)
        #expect(session.feed(String(repeating: "a", count: 16)) == "")
        #expect(session.feed("a") == "<close>")
    }

    @Test func defaultLimitAcceptsLongLines() {
        let session = TestClient()
        let uri = String(repeating: "x", count: 4000)
        _ = FakeDaemon()
        #expect(session.feed("add \"track\(uri)\"\n") == "OK\n")
        #expect(session.session.maxLineLength == 8191)
        #expect(session.feed("add \"\(String(repeating: "y", count: 8200))\"\n") == "<close>")
    }

    /// mpd 0.23 reads a client's input into 8192 bytes: a line that fills them with its newline
    /// is answered (a 4,097-byte one too), one byte more closes the connection, and it closes
    /// as soon as that many bytes without a newline have arrived, so the input stays bounded.
    @Test func theDefaultLimitIsMPDsInputBuffer() {
        /// `add "trackyyy…"`, `length` bytes without the newline.
        func line(_ length: Int) -> String { "add \"track" + String(repeating: "y", count: length - 11) + "\"" }
        let session = TestClient()
        #expect(session.feed(line(4097) + "\n") == "OK\n")
        #expect(session.feed(line(8191) + "\n") == "OK\n")
        #expect(session.feed(line(8192) + "\n") == "<close>")
        let unending = TestClient()
        #expect(unending.feed(String(repeating: "y", count: 8191)) == "")
        #expect(unending.feed("y") == "<close>")
    }
}

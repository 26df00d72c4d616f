import MPDProtocol
import Testing

@Suite struct RequestTokenizerTests {
    @Test func bareWords() throws {
        let request = try Request.parse("tagtypes enable Artist AlbumArtist Title Name Composer Performer")
        #expect(request.name == "tagtypes")
        #expect(request.arguments == ["enable", "Artist", "AlbumArtist", "Title", "Name", "Composer", "Performer"])
        #expect(try Request.parse("idle player mixer") == Request(name: "idle", arguments: ["player", "mixer"]))
        #expect(try Request.parse("status") == Request(name: "status"))
    }

    @Test func quotedArgumentsWithEscapes() throws {
        // The exact bytes mpc and python-mpd2 sent (fact sheet, 65-fake-argument-quoting).
        let line = #"add "dir with space/it's \"quoted\" \\ back.mp3""#
        #expect(try Request.parse(line).arguments == [#"dir with space/it's "quoted" \ back.mp3"#])
        #expect(try Request.parse(#"play "2""#).arguments == ["2"])
        #expect(try Request.parse(#"add """#).arguments == [""])
        // A backslash escapes any byte; `\n` is just `n`.
        #expect(try Request.parse(#"add "a\nb""#).arguments == ["anb"])
        #expect(try Request.parse("find \"a b\"\t\"c\" d").arguments == ["a b", "c", "d"])
    }

    @Test func utf8PassesThroughRaw() throws {
        let bytes: [UInt8] = Array("add \"".utf8) + [0xC3, 0x9C, 0x6E, 0xC3, 0xAF, 0x2F, 0xE6, 0x97, 0xA5] + Array(".mp3\"".utf8)
        #expect(try Request.parse(bytes).arguments == ["Ünï/日.mp3"])
        #expect(try Request.parse("add Ünï/日.mp3").arguments == ["Ünï/日.mp3"])
    }

    @Test func trailingCarriageReturnAndWhitespaceAreIgnored() throws {
        #expect(try Request.parse("ping\r") == Request(name: "ping"))
        #expect(try Request.parse("play \"1\" \t\r") == Request(name: "play", arguments: ["1"]))
        #expect(try Request.parse("ping\u{0}junk") == Request(name: "ping"))
    }

    @Test func missingClosingQuoteIsAnACKThatKeepsTheConnection() {
        #expect(throws: RequestParseError.invalidArgument(MPDError(.unknown, "Missing closing '\"'"))) {
            try Request.parse("add \"track1.mp3")
        }
        #expect(ack("add \"track1.mp3") == "ACK [5@0] {} Missing closing '\"'\n")
        #expect(ack(#"add "abc\"#) == "ACK [5@0] {} Missing closing '\"'\n")
    }

    @Test func otherTokenizerErrors() {
        #expect(ack(#"add "abc"def"#) == "ACK [5@0] {} Space expected after closing '\"'\n")
        #expect(ack("add it's") == "ACK [5@0] {} Invalid unquoted character\n")
        #expect(ack("add a\"b") == "ACK [5@0] {} Invalid unquoted character\n")
        // Tokenizer errors come before the command lookup.
        #expect(ack("frobnicate \"x") == "ACK [5@0] {} Missing closing '\"'\n")
    }

    @Test func malformedLinesCloseSilently() {
        for line in ["", "   ", "\r", "STATUS", "Ping", " ping", "\"ping\"", "1ping"] {
            #expect(throws: RequestParseError.malformed, "\(line.debugDescription)") { try Request.parse(line) }
        }
    }

    @Test func badCharacterInCommandNameIsAnACKThenClose() {
        #expect(throws: RequestParseError.invalidCommandName(MPDError(.unknown, "Invalid word character"))) {
            try Request.parse("pi!ng")
        }
        // Upper case after the first letter is a word, just not a known command.
        #expect((try? Request.parse("pIng")) == Request(name: "pIng"))
        #expect(ack("pIng") == "ACK [5@0] {} unknown command \"pIng\"\n")
    }

    @Test func argumentLimitIsMPDs() throws {
        let sixtyThree = "find" + String(repeating: " x", count: 63)
        #expect(try Request.parse(sixtyThree).arguments.count == 63)
        #expect(ack(sixtyThree + " x") == "ACK [2@0] {} Too many arguments\n")
    }
}

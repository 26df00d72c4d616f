import MPDProtocol
import Testing

/// The commands added to the table, with the argument errors mpd 0.23.12 gave for
/// them (Tests/IntegrationTests/Transcripts/51-raw-missing-commands.txt): the order in which
/// arguments are checked, the texts, and what each request becomes.
@Suite struct AddedCommandParsingTests {
    @Test func playlistAndClearerrorTakeNoArguments() throws {
        #expect(try parse("playlist").get() == .playlist)
        #expect(try parse("clearerror").get() == .clearerror)
        #expect(ack("playlist 0") == "ACK [2@0] {playlist} wrong number of arguments for \"playlist\"\n")
        #expect(ack("clearerror now") == "ACK [2@0] {clearerror} wrong number of arguments for \"clearerror\"\n")
    }

    @Test func readcommentsTakesOneURI() throws {
        #expect(try parse("readcomments \"a b.mp3\"").get() == .readcomments(uri: "a b.mp3"))
        #expect(ack("readcomments") == "ACK [2@0] {readcomments} wrong number of arguments for \"readcomments\"\n")
    }

    @Test func rangeidReadsTheIdThenTheRange() throws {
        #expect(try parse("rangeid 2 1:5").get() == .rangeid(2, SongTimeRange(startMilliseconds: 1000, endMilliseconds: 5000)))
        #expect(try parse("rangeid 2 1.5:").get() == .rangeid(2, SongTimeRange(startMilliseconds: 1500, endMilliseconds: 0)))
        #expect(try parse("rangeid 2 :4.25").get() == .rangeid(2, SongTimeRange(startMilliseconds: 0, endMilliseconds: 4250)))
        #expect(try parse("rangeid 2 :").get() == .rangeid(2, .whole))
        for bad in ["5:1", "-1:", "x", "1", "1:2x", "1:-2", " :1", "1:1", "inf:"] {
            #expect(ack("rangeid 2 \"\(bad)\"") == "ACK [2@0] {rangeid} Bad range\n", "\(bad)")
        }
        #expect(ack("rangeid x 1:2") == "ACK [2@0] {rangeid} Integer expected: x\n")
        #expect(ack("rangeid x y") == "ACK [2@0] {rangeid} Integer expected: x\n")
        #expect(ack("rangeid 2") == "ACK [2@0] {rangeid} wrong number of arguments for \"rangeid\"\n")
    }

    @Test func rangesReadAsStrtofAndPrintAsMPD() throws {
        // strtof: blanks before a number, a sign, an exponent, a point without digits after it.
        #expect(SongTimeRange(parsing: " 1:+2") == SongTimeRange(startMilliseconds: 1000, endMilliseconds: 2000))
        #expect(SongTimeRange(parsing: "1e1:2.e1") == SongTimeRange(startMilliseconds: 10_000, endMilliseconds: 20_000))
        #expect(SongTimeRange(parsing: ".5:") == SongTimeRange(startMilliseconds: 500, endMilliseconds: 0))
        #expect(SongTimeRange(parsing: "0.0005:") == .whole)  // under a millisecond: MPD's `SongTime` drops it
        #expect(SongTimeRange(startMilliseconds: 1000, endMilliseconds: 5000).protocolText == "1.000-5.000")
        #expect(SongTimeRange(startMilliseconds: 1500, endMilliseconds: 0).protocolText == "1.500-")
        #expect(SongTimeRange(startMilliseconds: 0, endMilliseconds: 4250).protocolText == "0.000-4.250")
        #expect(SongTimeRange.whole.protocolText == nil)
        var info = SongInfo(file: "a.mp3", duration: 4)
        info.range = SongTimeRange(startMilliseconds: 1000, endMilliseconds: 5000)
        var reply = Reply()
        reply.append(info)
        #expect(reply.rendered() == "file: a.mp3\nRange: 1.000-5.000\nTime: 4\nduration: 4.000\n")
    }

    @Test func tagEditsReadTheIdThenTheTagName() throws {
        #expect(try parse("addtagid 1 artist Someone").get() == .addtagid(1, tag: "Artist", value: "Someone"))
        #expect(try parse("addtagid 1 COMMENT x").get() == .addtagid(1, tag: "Comment", value: "x"))
        #expect(try parse("cleartagid 1").get() == .cleartagid(1, tag: nil))
        #expect(try parse("cleartagid 1 albumartist").get() == .cleartagid(1, tag: "AlbumArtist"))
        #expect(ack("addtagid 1 nosuchtag Someone") == "ACK [2@0] {addtagid} Unknown tag type: nosuchtag\n")
        #expect(ack("addtagid x nosuchtag Someone") == "ACK [2@0] {addtagid} Integer expected: x\n")
        #expect(ack("addtagid 1 artist") == "ACK [2@0] {addtagid} wrong number of arguments for \"addtagid\"\n")
        #expect(ack("cleartagid 1 nosuchtag") == "ACK [2@0] {cleartagid} Unknown tag type: nosuchtag\n")
        #expect(ack("cleartagid") == "ACK [2@0] {cleartagid} too few arguments for \"cleartagid\"\n")
        #expect(ack("cleartagid 1 artist x") == "ACK [2@0] {cleartagid} too many arguments for \"cleartagid\"\n")
    }

    @Test func searchaddplTakesAPositionAfterSortAndWindow() throws {
        let filter = try SongFilter(arguments: ["any", "pluck"], foldCase: true)
        #expect(try parse("searchaddpl found any pluck").get()
            == .searchaddpl("found", filter, sort: nil, window: nil, position: nil))
        #expect(try parse("searchaddpl found any pluck position 0").get()
            == .searchaddpl("found", filter, sort: nil, window: nil, position: 0))
        #expect(try parse("searchaddpl found any pluck sort -Title window 0:1 position 2").get()
            == .searchaddpl("found", filter, sort: SongOrder(key: .tag(.title), descending: true), window: PositionRange(start: 0, end: 1), position: 2))
        #expect(ack("searchaddpl found") == "ACK [2@0] {searchaddpl} too few arguments for \"searchaddpl\"\n")
        #expect(ack("searchaddpl found title") == "ACK [2@0] {searchaddpl} Incorrect number of filter arguments\n")
        #expect(ack("searchaddpl found nosuchtag x") == "ACK [2@0] {searchaddpl} Unknown filter type\n")
        #expect(ack("searchaddpl found any x position -1") == "ACK [2@0] {searchaddpl} Number too large: -1\n")
    }

    @Test func outputsAndPartitionsTakeTheirNames() throws {
        #expect(try parse("outputset 0 dop 1").get() == .outputset(0, name: "dop", value: "1"))
        // The attribute's name is the executor's to check, after the output's id.
        #expect(try parse("outputset 0 \"bad name\" 1").get() == .outputset(0, name: "bad name", value: "1"))
        #expect(ack("outputset x dop 1") == "ACK [2@0] {outputset} Integer expected: x\n")
        #expect(ack("outputset 0 dop") == "ACK [2@0] {outputset} wrong number of arguments for \"outputset\"\n")
        #expect(try parse("moveoutput null").get() == .moveoutput("null"))
        #expect(ack("moveoutput") == "ACK [2@0] {moveoutput} wrong number of arguments for \"moveoutput\"\n")
        #expect(try parse("newpartition p").get() == .newpartition("p"))
        #expect(try parse("delpartition p").get() == .delpartition("p"))
        #expect(ack("newpartition") == "ACK [2@0] {newpartition} wrong number of arguments for \"newpartition\"\n")
    }

    @Test func killTakesAnyArgumentsAndClosesWithoutAReply() throws {
        #expect(try parse("kill").get() == .kill)
        #expect(try parse("kill now please").get() == .kill)
        // The executor's reply closes the connection (FakeDaemon answers `kill` so): nothing
        // after it runs, no OK.
        let client = TestClient()
        #expect(client.feed("kill\nping\n") == "<close>")
        #expect(client.daemon.executed == [.kill])
        // In a list: what ran before is answered, then the connection closes.
        let listed = TestClient()
        #expect(listed.feed("command_list_ok_begin\nclear\nkill\nping\ncommand_list_end\n") == "list_OK\n<close>")
        #expect(listed.daemon.executed == [.clear, .kill])
    }

    @Test func permissionsAreMPDs() {
        for name in ["readcomments", "playlist", "listpartitions", "partition"] {
            #expect(Permission.required(forCommandNamed: name) == .read, "\(name)")
        }
        for name in ["addtagid", "cleartagid", "rangeid"] { #expect(Permission.required(forCommandNamed: name) == .add, "\(name)") }
        #expect(Permission.required(forCommandNamed: "clearerror") == .player)
        #expect(Permission.required(forCommandNamed: "searchaddpl") == .control)
        for name in ["kill", "outputset", "moveoutput", "newpartition", "delpartition"] {
            #expect(Permission.required(forCommandNamed: name) == .admin, "\(name)")
        }
    }
}

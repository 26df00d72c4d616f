import MPDProtocol
import Testing

@Suite struct CommandListTests {
    @Test func plainListStopsAtTheFailingCommand() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("command_list_begin\nping\nfrobnicate\nping\ncommand_list_end\n")
            == "ACK [5@1] {} unknown command \"frobnicate\"\n")
        #expect(session.feed("ping\n") == "OK\n")
    }

    @Test func okListSendsListOKsBeforeTheACKAndNoFinalOK() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("command_list_ok_begin\nping\nplay 99\nping\ncommand_list_end\n", daemon)
            == "list_OK\nACK [2@1] {play} Bad song index\n")
        #expect(daemon.executed == [.play(position: 99)])
    }

    @Test func successfulLists() {
        let session = TestClient()
        #expect(session.feed("command_list_ok_begin\nping\nping\ncommand_list_end\n") == "list_OK\nlist_OK\nOK\n")
        #expect(session.feed("command_list_begin\nping\nping\ncommand_list_end\n") == "OK\n")
        #expect(session.feed("command_list_begin\ncommand_list_end\n") == "OK\n")
        #expect(session.feed("command_list_ok_begin\ncommand_list_end\n") == "OK\n")
    }

    @Test func mpcStatusTrailer() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        let reply = session.feed("command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\n", daemon)
        #expect(reply == """
            volume: 100
            state: stop
            list_OK
            file: track1.mp3
            Last-Modified: 2026-11-22T06:30:35Z
            Format: 44100:24:2
            Artist: Test Artist
            Title: Tone 440 Hz
            Album: Test Album
            Track: 1
            Date: 2024
            Genre: Electronic
            Time: 30
            duration: 30.040
            Pos: 0
            Id: 1
            list_OK
            OK

            """)
        #expect(daemon.contexts.map(\.listIndex) == [0, 1])
    }

    @Test func earlierCommandsKeepTheirEffect() {
        // mpc add track1.mp3 nosuch.mp3
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("command_list_begin\nadd \"track1.mp3\"\nadd \"nosuch.mp3\"\ncommand_list_end\n")
            == "ACK [50@1] {add} No such directory\n")
        #expect(daemon.executed == [.add(uri: "track1.mp3", position: nil), .add(uri: "nosuch.mp3", position: nil)])
    }

    @Test func argumentErrorInsideAListCarriesTheIndex() {
        let session = TestClient()
        #expect(session.feed("command_list_ok_begin\nping\nping\npause 5\nping\ncommand_list_end\n")
            == "list_OK\nlist_OK\nACK [2@2] {pause} Boolean (0/1) expected: 5\n")
        #expect(session.feed("command_list_begin\nstatus\nadd \"x\ncommand_list_end\n", FakeDaemon())
            == "volume: 100\nstate: stop\nACK [5@1] {} Missing closing '\"'\n")
    }

    @Test func listEndOutsideAListAndNestedBegin() {
        let session = TestClient()
        #expect(session.feed("command_list_end\n") == "ACK [5@0] {} unknown command \"command_list_end\"\n")
        #expect(session.feed("command_list_begin\ncommand_list_begin\ncommand_list_end\n")
            == "ACK [5@0] {} unknown command \"command_list_begin\"\n")
        #expect(session.feed("ping\n") == "OK\n")
    }

    @Test func nothingIsRunBeforeCommandListEnd() {
        let daemon = FakeDaemon()
        let session = TestClient(daemon: daemon)
        #expect(session.feed("command_list_begin\nplay\nsto", daemon) == "")
        #expect(session.feed("p\n", daemon) == "")
        #expect(daemon.executed.isEmpty)
        #expect(session.session.isCollectingCommandList)
        #expect(session.feed("command_list_end\n") == "OK\n")
        #expect(daemon.executed == [.play(position: nil), .stop])
    }

    @Test func idleInsideAListEntersIdleMode() {
        let session = TestClient()
        #expect(session.feed("command_list_begin\nidle\ncommand_list_end\n") == "")
        #expect(session.isIdle)
        #expect(session.feed("ping\n") == "<close>")
    }

    @Test func idleInsideAListWithPendingEventsAnswersAtOnce() {
        let session = TestClient()
        _ = session.changed(.player)
        #expect(session.feed("command_list_ok_begin\nping\nidle\nping\ncommand_list_end\n")
            == "list_OK\nchanged: player\nOK\n")
        #expect(!session.isIdle)
        #expect(session.feed("ping\n") == "OK\n")
    }

    @Test func closeInsideAList() {
        let session = TestClient()
        #expect(session.feed("command_list_ok_begin\nping\nclose\nping\ncommand_list_end\nping\n") == "list_OK\n<close>")
        #expect(session.isClosed)
    }

    @Test func badCommandNameInsideAListACKsWithIndexThenCloses() {
        let session = TestClient()
        #expect(session.feed("command_list_begin\nping\npi!ng\ncommand_list_end\n")
            == "ACK [5@1] {} Invalid word character\n<close>")
    }

    @Test func malformedLineInsideAListCloses() {
        let session = TestClient()
        #expect(session.feed("command_list_begin\nping\nSTATUS\n") == "<close>")
    }

    @Test func tagtypesInsideAListAppliesToLaterCommands() {
        // mpc playlist
        let session = TestClient()
        let reply = session.feed("""
            command_list_begin
            tagtypes "clear"
            tagtypes enable Artist AlbumArtist Title Name Composer Performer
            playlistinfo
            command_list_end

            """, FakeDaemon())
        #expect(reply == """
            file: track1.mp3
            Last-Modified: 2026-11-22T06:30:35Z
            Format: 44100:24:2
            Artist: Test Artist
            Title: Tone 440 Hz
            Time: 30
            duration: 30.040
            Pos: 0
            Id: 1
            file: track1.mp3
            Last-Modified: 2026-11-22T06:30:35Z
            Format: 44100:24:2
            Artist: Test Artist
            Title: Tone 440 Hz
            Time: 30
            duration: 30.040
            Pos: 1
            Id: 2
            OK

            """)
    }

    @Test func oversizedCommandListCloses() {
        let session = TestClient(maxCommandListSize: 10)
        #expect(session.feed("command_list_begin\nping\nping\n") == "")  // 5 + 5 bytes
        #expect(session.feed("ping\n") == "<close>")
    }
}

import MPDProtocol
import Testing

@Suite struct ReplyTests {
    @Test func fieldsRenderInOrder() {
        var reply = Reply()
        reply.append("outputid", "0")
        reply.append("outputname", "Null Output")
        reply.append("plugin", "null")
        reply.append("outputenabled", 1)
        #expect(reply.rendered() == "outputid: 0\noutputname: Null Output\nplugin: null\noutputenabled: 1\n")
        #expect(Reply.empty.rendered() == "")
    }

    @Test func secondsAndTimes() {
        #expect(ProtocolFormatting.seconds(30.04) == "30.040")
        #expect(ProtocolFormatting.seconds(12.614) == "12.614")
        #expect(ProtocolFormatting.seconds(0) == "0.000")
        #expect(ProtocolFormatting.seconds(5.0409) == "5.041")
        #expect(ProtocolFormatting.wholeSeconds(12.614) == "13")
        #expect(ProtocolFormatting.wholeSeconds(30.04) == "30")
        var reply = Reply()
        reply.append("elapsed", seconds: 1.5)
        #expect(reply.rendered() == "elapsed: 1.500\n")
    }

    @Test func timestamps() {
        #expect(ProtocolFormatting.timestamp(unixSeconds: 1_795_329_035) == "2026-11-22T06:30:35Z")
        #expect(ProtocolFormatting.timestamp(unixSeconds: 951_868_799) == "2000-02-29T23:59:59Z")
        #expect(ProtocolFormatting.timestamp(unixSeconds: 0) == "1970-01-01T00:00:00Z")
        #expect(ProtocolFormatting.timestamp(unixSeconds: -1) == "1969-12-31T23:59:59Z")
    }

    @Test func untaggedSongBlock() {
        var reply = Reply()
        reply.append(SongInfo(file: "sub/untagged.mp3", lastModified: 1_795_329_036, format: "44100:24:2",
                              duration: 5.041, position: 4, id: 5))
        #expect(reply.rendered() == """
            file: sub/untagged.mp3
            Last-Modified: 2026-11-22T06:30:36Z
            Format: 44100:24:2
            Time: 5
            duration: 5.041
            Pos: 4
            Id: 5

            """)
    }

    @Test func tagLinesAreFilteredBySelection() {
        var reply = Reply()
        reply.append(.artist, "A")
        reply.append(.artist, "B")
        reply.append("file", "x.mp3")
        reply.append(.album, "C")
        #expect(reply.rendered() == "Artist: A\nArtist: B\nfile: x.mp3\nAlbum: C\n")
        #expect(reply.rendered(tagTypes: [.album]) == "file: x.mp3\nAlbum: C\n")
        #expect(reply.rendered(tagTypes: []) == "file: x.mp3\n")
    }

    @Test func lineBreaksInValuesCannotBreakFraming() {
        var reply = Reply()
        reply.append("file", "evil\nOK\r")
        reply.append(.title, "a\r\nb")
        #expect(reply.rendered() == "file: evil OK \nTitle: a b\n")
    }

    @Test func tagtypesArePerClient() {
        let session = TestClient()
        let all = session.feed("tagtypes\n")
        #expect(all.hasPrefix("tagtype: Artist\ntagtype: ArtistSort\ntagtype: Album\n"))
        #expect(all.hasSuffix("tagtype: MUSICBRAINZ_RELEASETRACKID\ntagtype: MUSICBRAINZ_WORKID\nOK\n"))
        #expect(all.split(separator: "\n").count == 31)
        #expect(session.feed("tagtypes clear\ntagtypes\n") == "OK\nOK\n")
        #expect(session.feed("tagtypes enable Title artist\ntagtypes\n") == "OK\ntagtype: Artist\ntagtype: Title\nOK\n")
        #expect(session.feed("tagtypes disable Title\ntagtypes\n") == "OK\ntagtype: Artist\nOK\n")
        let daemon = FakeDaemon()
        #expect(session.feed("currentsong\n", daemon) == """
            file: track1.mp3
            Last-Modified: 2026-11-22T06:30:35Z
            Format: 44100:24:2
            Artist: Test Artist
            Time: 30
            duration: 30.040
            Pos: 0
            Id: 1
            OK

            """)
        #expect(daemon.contexts.last?.tagTypes == [.artist])
        #expect(session.feed("tagtypes all\n") == "OK\n")
        #expect(session.session.tagTypes == Set(TagType.allCases))
        // Another client is unaffected.
        let other = ClientSession()
        #expect(other.tagTypes.count == 30)
        #expect(session.feed("tagtypes enable Nope\n") == "ACK [2@0] {tagtypes} Unknown tag type\n")
    }
}

import MPDProtocol
import Testing
@testable import DaemonCore
@testable import WebAPI

/// The command layer's text replies as the WebSocket's JSON.
@Suite struct ReplyJSONTests {
    func answer(_ command: String, _ text: String) -> String {
        ReplyJSON.answer(command: command, actions: [.send(text)]).encoded
    }

    @Test func fieldsInOrderWithNumbers() {
        #expect(answer("status", "volume: 100\nstate: play\nsingle: oneshot\nelapsed: 12.340\nsongid: 3\nOK\n")
            == #"{"ok":{"volume":100,"state":"play","single":"oneshot","elapsed":12.34,"songid":3}}"#)
        #expect(answer("next", "OK\n") == #"{"ok":{}}"#)
        #expect(answer("currentsong", "file: a.mp3\nArtist: A\nArtist: B\nTitle: 1999\nOK\n")
            == #"{"ok":{"file":"a.mp3","Artist":["A","B"],"Title":"1999"}}"#)
    }

    @Test func listsAreArrays() {
        #expect(answer("playlistinfo", "file: a.mp3\nPos: 0\nId: 1\nfile: b.mp3\nPos: 1\nId: 2\nOK\n")
            == #"{"ok":[{"file":"a.mp3","Pos":0,"Id":1},{"file":"b.mp3","Pos":1,"Id":2}]}"#)
        #expect(answer("playlistinfo", "file: a.mp3\nId: 1\nOK\n") == #"{"ok":[{"file":"a.mp3","Id":1}]}"#)
        #expect(answer("playlistinfo", "OK\n") == #"{"ok":[]}"#)
        #expect(answer("commands", "command: add\ncommand: play\nOK\n") == #"{"ok":["add","play"]}"#)
        #expect(answer("lsinfo", "directory: d\nLast-Modified: x\nfile: f.mp3\nTime: 3\nplaylist: p\nOK\n")
            == #"{"ok":[{"directory":"d","Last-Modified":"x"},{"file":"f.mp3","Time":3},{"playlist":"p"}]}"#)
        // `playlist` (mpd's deprecated list of the queue's files) numbers its keys: the array's order says it.
        #expect(answer("playlist", "0:file: a.mp3\n1:file: b: c.mp3\nOK\n") == #"{"ok":["a.mp3","b: c.mp3"]}"#)
        #expect(answer("playlist", "OK\n") == #"{"ok":[]}"#)
    }

    @Test func anACKIsAnError() {
        #expect(answer("playid", "ACK [50@0] {playid} No such song\n")
            == #"{"error":{"ack":50,"index":0,"command":"playid","message":"No such song"}}"#)
    }

    @Test func binaryIsBase64() {
        let json = ReplyJSON.answer(command: "albumart", actions: [.send("size: 3\nbinary: 3\n"), .sendBytes([1, 2, 3, 10]), .send("OK\n")])
        #expect(json.encoded == #"{"ok":{"size":"3","binary":"AQID"}}"#)
    }

    @Test func stringsAreEscaped() {
        #expect(JSONValue.string("a\"b\\c\n\u{1}\u{2028}").encoded == #""a\"b\\c\n\u0001\u2028""#)
        #expect(JSONValue.number(12.5) == "12.5" && JSONValue.number(3) == "3" && JSONValue.number(.nan) == "null")
        #expect(WebSocketClient.tick(subscription: 1, songID: 3, elapsed: 12.34005)
            == #"{"event":"time","subscription":1,"songid":3,"elapsed":12.3401,"state":"play"}"#)
    }
}

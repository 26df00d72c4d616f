import MPDProtocol
import Testing

/// `sticker`'s arguments with mpd 0.23's errors in its order, and mpd 0.24's `sort`/`window`.
@Suite struct StickerRequestTests {
    private func parse(_ arguments: String...) throws(MPDError) -> StickerRequest {
        try StickerRequest.parse(arguments)
    }

    private func error(_ arguments: String...) -> String? {
        do throws(MPDError) {
            _ = try StickerRequest.parse(arguments)
            return nil
        } catch {
            return error.ackLine()
        }
    }

    @Test func theTableAsksForThreeArguments() throws {
        #expect(throws: MPDError(.argument, "too few arguments for \"sticker\"", command: "sticker")) {
            try Command(Request(name: "sticker", arguments: ["get", "song"]))
        }
        #expect(try Command(Request(name: "sticker", arguments: ["list", "song", "a.mp3"])) == .sticker(["list", "song", "a.mp3"]))
    }

    @Test func theSubCommands() throws {
        #expect(try parse("get", "song", "a.mp3", "rating") == .get(uri: "a.mp3", name: "rating"))
        #expect(try parse("set", "song", "a.mp3", "rating", "5") == .set(uri: "a.mp3", name: "rating", value: "5"))
        #expect(try parse("delete", "song", "a.mp3") == .delete(uri: "a.mp3", name: nil))
        #expect(try parse("delete", "song", "a.mp3", "rating") == .delete(uri: "a.mp3", name: "rating"))
        #expect(try parse("list", "song", "a.mp3") == .list(uri: "a.mp3"))
        #expect(try parse("find", "song", "", "rating") == .find(StickerQuery(directory: "", name: "rating")))
        #expect(try parse("find", "song", "dir", "rating", "<", "3")
                == .find(StickerQuery(directory: "dir", name: "rating", match: .init(.less, "3"))))
    }

    @Test func mpdsErrorsInMPDsOrder() {
        // The domain first, whatever the sub-command.
        #expect(error("frob", "album", "x") == "ACK [2@0] {sticker} unknown sticker domain\n")
        #expect(error("get", "Song", "a.mp3", "rating") == "ACK [2@0] {sticker} unknown sticker domain\n")
        #expect(error("frob", "song", "x") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("get", "song", "a.mp3") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("set", "song", "a.mp3", "rating") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("list", "song", "a.mp3", "x") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("delete", "song", "a.mp3", "x", "y") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("find", "song", "", "rating", "=") == "ACK [2@0] {sticker} bad request\n")
        #expect(error("find", "song", "", "rating", "~", "3") == "ACK [2@0] {sticker} bad operator\n")
        #expect(error("find", "song", "", "rating", "=", "3", "x") == "ACK [2@0] {sticker} bad request\n")
    }

    @Test func findTakesMPD024sSortAndWindowAtItsEnd() throws {
        #expect(try parse("find", "song", "", "rating", "sort", "value")
                == .find(StickerQuery(directory: "", name: "rating", sort: .init(key: .value))))
        #expect(try parse("find", "song", "", "rating", ">", "2", "sort", "-value_int", "window", "1:3")
                == .find(StickerQuery(directory: "", name: "rating", match: .init(.greater, "2"),
                                      sort: .init(key: .valueInt, descending: true),
                                      window: PositionRange(start: 1, end: 3))))
        #expect(try parse("find", "song", "", "rating", "window", "2:")
                == .find(StickerQuery(directory: "", name: "rating", window: PositionRange(start: 2, end: nil))))
        #expect(error("find", "song", "", "rating", "sort", "title") == "ACK [2@0] {sticker} Unknown sort tag \"title\"\n")
        #expect(error("find", "song", "", "rating", "window", "x") == "ACK [2@0] {sticker} Integer or range expected: x\n")
        // In mpd's order: the window last, the sort before it.
        #expect(error("find", "song", "", "rating", "window", "1:2", "sort", "uri") == "ACK [2@0] {sticker} bad operator\n")
    }
}

import MPDProtocol
import Testing

/// Binary replies (`albumart`, `readpicture`), framed as MPD's `Response::WriteBinary`, the
/// per-client `binarylimit` that sizes them, and `sticker` without a sticker database.
@Suite struct BinaryReplyTests {
    /// Bytes that are no text and hold the reply's own delimiters: a framing that looked
    /// for lines inside them, or decoded them as UTF-8, would break.
    static let payload: [UInt8] = [0xFF, 0xD8, 0x00, 0x0A] + Array("OK\nACK [5@0] {} x\n".utf8) + [0xC3, 0x28, 0x80]

    static func picture(_ command: Command, _ context: CommandContext) throws(MPDError) -> Reply {
        guard case .readpicture(_, let offset) = command else { return .empty }
        var reply = Reply()
        reply.append("size", payload.count)
        reply.append("type", "image/jpeg")
        reply.setBinary(Array(payload[offset..<min(payload.count, offset + context.binaryLimit)]))
        return reply
    }

    /// The bytes of the actions, binary ones as they are.
    static func bytes(_ actions: [SessionAction]) -> [UInt8] {
        actions.flatMap { action -> [UInt8] in
            switch action {
            case .send(let text): Array(text.utf8)
            case .sendBytes(let bytes): bytes
            case .close: []
            }
        }
    }

    @Test func aBinaryReplyIsSizeTypeBinaryCountTheBytesANewlineAndOK() {
        let client = TestClient()
        let actions = client.receive("readpicture \"a b.mp3\" 0\n", executor: Self.picture)
        let expected = Array("size: \(Self.payload.count)\ntype: image/jpeg\nbinary: \(Self.payload.count)\n".utf8)
            + Self.payload + Array("\nOK\n".utf8)
        #expect(Self.bytes(actions) == expected)
        #expect(actions.contains(.sendBytes(Self.payload + [0x0A])), "the payload is sent as bytes, not as text")
    }

    @Test func binarylimitSizesTheChunksOfThatClientOnly() {
        let client = TestClient()
        #expect(client.feed("binarylimit 64\n") == "OK\n")
        var contexts: [CommandContext] = []
        _ = client.receive("readpicture x.mp3 0\n") { command, context throws(MPDError) in
            contexts.append(context)
            return try Self.picture(command, context)
        }
        #expect(contexts.map(\.binaryLimit) == [64])
        #expect(client.session.binaryLimit == 64)
        #expect(TestClient().session.binaryLimit == 8192, "MPD's default")
    }

    @Test func binaryRepliesInACommandListAreEachFollowedByListOK() {
        let client = TestClient()
        let size = Self.payload.count
        let actions = client.receive("command_list_ok_begin\nreadpicture x.mp3 20\nreadpicture x.mp3 \(size)\ncommand_list_end\n",
                                     executor: Self.picture)
        let expected = Array("size: \(size)\ntype: image/jpeg\nbinary: \(size - 20)\n".utf8) + Array(Self.payload[20...])
            + Array("\nlist_OK\nsize: \(size)\ntype: image/jpeg\nbinary: 0\n\nlist_OK\nOK\n".utf8)
        #expect(Self.bytes(actions) == expected)
    }

    @Test func albumartAndReadpictureTakeAURIAndAnOffset() throws {
        #expect(try parse("albumart \"dir/a song.mp3\" 8192").get() == .albumart(uri: "dir/a song.mp3", offset: 8192))
        #expect(try parse("readpicture x.mp3 0").get() == .readpicture(uri: "x.mp3", offset: 0))
        #expect(throws: MPDError(.argument, "wrong number of arguments for \"albumart\"", command: "albumart")) {
            try parse("albumart x.mp3").get()
        }
        #expect(throws: MPDError(.argument, "Integer expected: -", command: "readpicture")) {
            try parse("readpicture x.mp3 -").get()
        }
    }

    /// `sticker`: the table counts its arguments and hands the rest to the daemon, which reads
    /// them once it knows it keeps stickers (mpd says `sticker database is disabled` first);
    /// `commands` lists it unless the daemon cannot run it, as mpd's `command_available` says.
    @Test func stickerReachesTheDaemonAndIsListedOnlyWhereAvailable() {
        let client = TestClient()
        #expect(client.feed("sticker list\n") == "ACK [2@0] {sticker} too few arguments for \"sticker\"\n")
        #expect(client.daemon.executed.isEmpty)
        _ = client.feed("sticker get song x.mp3 rating\n")
        #expect(client.daemon.executed == [.sticker(["get", "song", "x.mp3", "rating"])])
        #expect(client.feed("commands\n").contains("command: sticker\n"))
        client.session.unavailableCommands = ["sticker"]
        let listed = client.feed("commands\n")
        #expect(!listed.contains("command: sticker\n") && listed.contains("command: status\n"))
        // notcommands names only what a permission refuses, as mpd's does.
        #expect(client.feed("notcommands\n") == "OK\n")
    }
}

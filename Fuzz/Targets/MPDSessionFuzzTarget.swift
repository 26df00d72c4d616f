import MPDProtocol
import QueuePlayer

/// Bytes from a control-socket client, through ``ClientSession`` with a small executor.
///
/// The first byte of an input is a header: its low five bits plus one are the size of
/// the chunks the rest arrives in, and bit 5 selects small line and command-list limits
/// (so that short inputs reach the limits). The rest is what the client sends.
///
/// Properties: the replies do not depend on how the input is chunked; nothing follows
/// a close; every reply is whole lines; the executor never sees a command the session
/// answers itself, nor arguments the daemon could not act on; and state changes
/// reported between chunks (waking `idle`) break none of this.
enum MPDSessionFuzzTarget {
    static func run(_ input: UnsafeRawBufferPointer) throws(FuzzFinding) {
        guard let header = input.first else { return }
        let chunkSize = Int(header & 0x1F) + 1
        let smallLimits = header & 0x20 != 0
        let bytes = input.dropFirst()
        func makeSession() -> ClientSession {
            smallLimits ? ClientSession(maxLineLength: 48, maxCommandListSize: 160) : ClientSession()
        }

        let executor = Executor()
        var whole = makeSession()
        var wholeActions = whole.receive(bytes, executor: executor.execute)
        wholeActions += whole.notify(Subsystem.allCases)

        var chunked = makeSession()
        var chunkedActions: [SessionAction] = []
        for start in stride(from: bytes.startIndex, to: bytes.endIndex, by: chunkSize) {
            chunkedActions += chunked.receive(bytes[start..<min(start + chunkSize, bytes.endIndex)], executor: executor.execute)
        }
        chunkedActions += chunked.notify(Subsystem.allCases)

        try checkWellFormed(wholeActions, session: whole)
        try FuzzFinding.require(transcript(wholeActions) == transcript(chunkedActions),
                                "chunks of \(chunkSize) bytes answered \(transcript(chunkedActions).debugDescription), "
                                + "all at once \(transcript(wholeActions).debugDescription)")

        // The daemon reports changes after every read: an `idle` may be woken between lines.
        var notified = makeSession()
        var notifiedActions: [SessionAction] = []
        for start in stride(from: bytes.startIndex, to: bytes.endIndex, by: chunkSize) {
            notifiedActions += notified.receive(bytes[start..<min(start + chunkSize, bytes.endIndex)], executor: executor.execute)
            notifiedActions += notified.notify([.player, .mixer])
        }
        try checkWellFormed(notifiedActions, session: notified)
        try FuzzFinding.require(executor.finding == nil, executor.finding ?? "")
    }

    /// Nothing after a close, no empty writes, only whole lines, and a closed session stays silent.
    private static func checkWellFormed(_ actions: [SessionAction], session: ClientSession) throws(FuzzFinding) {
        for (index, action) in actions.enumerated() {
            switch action {
            case .close:
                try FuzzFinding.require(index == actions.count - 1, "actions after a close: \(actions)")
            case .send(let text):
                try FuzzFinding.require(text.hasSuffix("\n"), "a reply that is not whole lines: \(text.debugDescription)")
            case .sendBytes(let bytes):
                try FuzzFinding.require(bytes.last == UInt8(ascii: "\n"), "a binary payload without its newline")
            }
        }
        try FuzzFinding.require(session.isClosed == (actions.last == .close), "isClosed disagrees with the actions")
        var session = session
        if session.isClosed {
            try FuzzFinding.require(session.receive(Array("ping\n".utf8), executor: { _, _ throws(MPDError) in .empty }).isEmpty,
                                    "a closed session answered")
        }
    }

    private static func transcript(_ actions: [SessionAction]) -> String {
        actions.map { action in
            switch action {
            case .send(let text): text
            case .sendBytes(let bytes): String(decoding: bytes, as: UTF8.self)
            case .close: "<close>"
            }
        }.joined()
    }

    /// Answers like a daemon with a queue of three songs, stopped, and one output; does the
    /// arithmetic the daemon does with the arguments; records the first broken expectation.
    private final class Executor {
        static let queueLength = 3
        static let duration = 30.04
        var finding: String?

        func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
            if command.isHandledBySession, finding == nil {
                finding = "the executor was given \(command), which the session answers"
            }
            switch command {
            case .play(let position):
                if let position, position >= Self.queueLength { throw .badSongIndex }
                return .empty
            case .next, .previous:
                throw .notPlaying
            case .seekcur(let target):
                // As Partition: clamp to the song, then a player time.
                let seconds = min(max(0, target.seconds(from: 12.5)), Self.duration)
                if !(0...Self.duration).contains(seconds), finding == nil { finding = "seekcur \(target) went to \(seconds)" }
                _ = MediaTime(seconds: seconds)
                return .empty
            case .status:
                var reply = Reply()
                reply.append("volume", "-1")
                reply.append("state", "stop")
                reply.append("playlistlength", Self.queueLength)
                return reply
            case .currentsong, .playlistinfo:
                let positions: Range<Int>
                if case .playlistinfo(let range) = command {
                    positions = try range.positionsForListing(queueLength: Self.queueLength)
                    if !(positions.lowerBound >= 0 && positions.upperBound <= Self.queueLength), finding == nil {
                        finding = "playlistinfo \(range) listed \(positions)"
                    }
                } else {
                    positions = 0..<1
                }
                var reply = Reply()
                for position in positions {
                    reply.append(SongInfo(file: "track\(position).mp3", format: "44100:16:2",
                                          tags: [.init(.artist, "Artist"), .init(.title, "Title \(position)")],
                                          duration: Self.duration, position: position, id: position + 1))
                }
                return reply
            case .delete(let range):
                let positions = try range.positionsForDeletion(queueLength: Self.queueLength)
                if !(positions.lowerBound >= 0 && positions.upperBound <= Self.queueLength), finding == nil {
                    finding = "delete \(range) removed \(positions)"
                }
                return .empty
            case .add(let uri, _):
                guard uri.isEmpty || uri.hasPrefix("track") else { throw .noSuchDirectory }
                return .empty
            case .setvol:
                return .empty
            case .outputs:
                var reply = Reply()
                reply.append("outputid", 0)
                reply.append("outputname", "default")
                reply.append("outputenabled", 1)
                return reply
            case .enableoutput(let id), .disableoutput(let id):
                guard id == 0 else { throw .noSuchOutput }
                return .empty
            case .update:
                var reply = Reply()
                reply.append("updating_db", 1)
                return reply
            case .sticker(let arguments):
                // As StickerCommands: typed once the store is known, with mpd's errors; a
                // window is never taken below 0 or backwards.
                if case .find(let query) = try StickerRequest.parse(arguments), let window = query.window,
                   window.start < 0 || (window.end.map { $0 < window.start } ?? false), finding == nil {
                    finding = "sticker find took the window \(window)"
                }
                var reply = Reply()
                reply.append("sticker", "rating=5")
                return reply
            default:
                return .empty
            }
        }
    }
}

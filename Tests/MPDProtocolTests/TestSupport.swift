import MPDProtocol

/// A stand-in for the daemon: records the commands it runs and answers a few of them like mpd.
final class FakeDaemon: CommandExecutor {
    var executed: [Command] = []
    var queueLength = 5
    var isPlaying = false
    var contexts: [CommandContext] = []

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply {
        executed.append(command)
        contexts.append(context)
        switch command {
        case .play(let position):
            if let position, position >= queueLength { throw .badSongIndex }
            return .empty
        case .seekcur, .next, .previous:
            guard isPlaying else { throw .notPlaying }
            return .empty
        case .add(let uri, _):
            guard uri.hasPrefix("track") else { throw .noSuchDirectory }
            return .empty
        case .status:
            var reply = Reply()
            reply.append("volume", "100")
            reply.append("state", isPlaying ? "play" : "stop")
            return reply
        case .currentsong:
            var reply = Reply()
            reply.append(FakeDaemon.track1)
            return reply
        case .playlistinfo(let range):
            var reply = Reply()
            for position in try range.positionsForListing(queueLength: 2) {
                var song = FakeDaemon.track1
                song.position = position
                song.id = position + 1
                reply.append(song)
            }
            return reply
        case .update:
            var reply = Reply()
            reply.append("updating_db", "2")
            return reply
        case .kill:
            var reply = Reply()
            reply.closeConnection()
            return reply
        default:
            return .empty
        }
    }

    /// track1.mp3 exactly as mpd 0.23 described it in the fact sheet.
    static let track1 = SongInfo(
        file: "track1.mp3",
        lastModified: 1_795_329_035,
        format: "44100:24:2",
        tags: [
            .init(.artist, "Test Artist"), .init(.title, "Tone 440 Hz"), .init(.album, "Test Album"),
            .init(.track, "1"), .init(.date, "2024"), .init(.genre, "Electronic"),
        ],
        duration: 30.04,
        position: 0,
        id: 1
    )
}

/// Renders actions as one string; a close shows as `<close>`.
func transcript(_ actions: [SessionAction]) -> String {
    actions.map { action in
        switch action {
        case .send(let text): text
        case .sendBytes(let bytes): String(decoding: bytes, as: UTF8.self)
        case .close: "<close>"
        }
    }.joined()
}

/// A session behind a reference, so tests can call its mutating methods inside `#expect`.
final class TestClient {
    var session: ClientSession
    let daemon: FakeDaemon

    init(maxLineLength: Int = ClientSession.defaultMaxLineLength, maxCommandListSize: Int = ClientSession.defaultMaxCommandListSize,
         daemon: FakeDaemon = FakeDaemon()) {
        session = ClientSession(maxLineLength: maxLineLength, maxCommandListSize: maxCommandListSize)
        self.daemon = daemon
    }

    /// Feeds text and returns what the session answered, as a transcript string.
    func feed(_ text: String, _ daemon: FakeDaemon? = nil) -> String {
        transcript(session.receive(text.utf8, executor: daemon ?? self.daemon))
    }

    func receive(_ text: String, executor: (Command, CommandContext) throws(MPDError) -> Reply) -> [SessionAction] {
        session.receive(text.utf8, executor: executor)
    }

    /// Reports changes and returns what the session sent because of them.
    func changed(_ subsystems: Subsystem...) -> String {
        transcript(session.notify(subsystems))
    }

    var isIdle: Bool { session.isIdle }
    var isClosed: Bool { session.isClosed }
}

/// Parses a line all the way to a command, or returns the ACK line the session would send.
func parse(_ line: String) -> Result<Command, MPDError> {
    do {
        return .success(try Command(try Request.parse(line)))
    } catch let error as MPDError {
        return .failure(error)
    } catch let error as RequestParseError {
        switch error {
        case .invalidArgument(let ack), .invalidCommandName(let ack): return .failure(ack)
        case .malformed: return .failure(MPDError(.unknown, "<malformed>"))
        }
    } catch {
        fatalError("unexpected \(error)")
    }
}

/// The ACK line for a line that must fail to parse; nil if it parsed.
func ack(_ line: String) -> String? {
    if case .failure(let error) = parse(line) { return error.ackLine() }
    return nil
}

/// A deterministic generator (xorshift64*), so a random draw is the same on every run.
/// (Not TestSupport's: that module brings Foundation, whose `String.contains` would replace
/// the standard library's that these tests take as the reference.)
struct Xorshift: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed | 1 }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// A request that has been checked against the command table and whose arguments are typed.
///
/// Cases marked *session* are answered by ``ClientSession`` itself and never reach a
/// ``CommandExecutor``; all other cases are the executor's job. Argument errors (counts,
/// numbers, names) have already been turned into mpd's exact ACK texts by
/// ``Command/init(_:)``, so the executor only deals with state (`Bad song index`,
/// `Not playing`, `No such directory`, ...).
public enum Command: Hashable, Sendable {
    // MARK: Playback
    /// `play [POS]`: start playing at a queue position, or resume/start the current song when `nil`
    /// (mpd also treats `play -1` as no position). Negative positions are already rejected.
    /// A position past the end of the queue must be answered with ``MPDError/badSongIndex``.
    case play(position: Int?)
    /// `pause [0|1]`: `true` pauses, `false` resumes, `nil` toggles. Does nothing while stopped.
    case pause(Bool?)
    /// `next`: the next song; ``MPDError/notPlaying`` while stopped.
    case next
    /// `previous`: the previous song; ``MPDError/notPlaying`` while stopped.
    case previous
    /// `stop`.
    case stop
    /// `seekcur TIME|+TIME|-TIME`: seek within the current song; ``MPDError/notPlaying`` while stopped.
    case seekcur(SeekTarget)

    // MARK: Status
    /// `status`.
    case status
    /// `currentsong`: the current song's block, or an empty reply.
    case currentsong

    // MARK: Queue
    /// `playlistinfo [POS|START:END]`: song blocks; ``PositionRange/all`` without an argument.
    case playlistinfo(PositionRange)
    /// `add URI`: add a file or directory of the library; `""` (and `/`) mean the whole library.
    case add(uri: String)
    /// `clear`: empty the queue.
    case clear
    /// `delete POS|START:END`: remove songs from the queue.
    case delete(PositionRange)

    // MARK: Options and volume
    /// `setvol 0...100`.
    case setvol(Int)
    /// `repeat 0|1`.
    case `repeat`(Bool)
    /// `random 0|1`.
    case random(Bool)
    /// `single 0|1|oneshot`.
    case single(SingleMode)
    /// `consume 0|1`.
    case consume(Bool)

    // MARK: Outputs and library
    /// `outputs`.
    case outputs
    /// `enableoutput ID`; ``MPDError/noSuchOutput`` for an unknown id.
    case enableoutput(Int)
    /// `disableoutput ID`; ``MPDError/noSuchOutput`` for an unknown id.
    case disableoutput(Int)
    /// `update [URI]`: rescan the library (`nil` = all of it); reply `updating_db: N`.
    case update(uri: String?)
    /// `config`: reply `music_directory: ...`.
    case config

    // MARK: Session (handled by ClientSession)
    /// *session* `ping`.
    case ping
    /// *session* `close`: close without a reply.
    case close
    /// *session* `commands`: the supported command names.
    case commands
    /// *session* `notcommands`: the commands this client may not use (none).
    case notcommands
    /// *session* `tagtypes ...`: per-client tag selection.
    case tagtypes(TagTypesRequest)
    /// *session* `idle [SUBSYSTEM...]`: an empty list means every subsystem.
    case idle([Subsystem])
    /// *session* `noidle`. A `noidle` line is normally intercepted before parsing; see ``ClientSession``.
    case noidle
    /// *session* `binarylimit SIZE`: accepted and validated; this daemon never sends binary data.
    case binarylimit(Int)

    /// The command name as it appears on the wire and in `{command}` of an ACK.
    public var name: String {
        switch self {
        case .play: "play"
        case .pause: "pause"
        case .next: "next"
        case .previous: "previous"
        case .stop: "stop"
        case .seekcur: "seekcur"
        case .status: "status"
        case .currentsong: "currentsong"
        case .playlistinfo: "playlistinfo"
        case .add: "add"
        case .clear: "clear"
        case .delete: "delete"
        case .setvol: "setvol"
        case .repeat: "repeat"
        case .random: "random"
        case .single: "single"
        case .consume: "consume"
        case .outputs: "outputs"
        case .enableoutput: "enableoutput"
        case .disableoutput: "disableoutput"
        case .update: "update"
        case .config: "config"
        case .ping: "ping"
        case .close: "close"
        case .commands: "commands"
        case .notcommands: "notcommands"
        case .tagtypes: "tagtypes"
        case .idle: "idle"
        case .noidle: "noidle"
        case .binarylimit: "binarylimit"
        }
    }

    /// Whether the command's work or reply grows with the queue or the library (`playlistinfo`,
    /// `add`, `update`): a daemon may keep such commands from piling up ahead of cheap ones.
    public var isExpensive: Bool {
        switch self {
        case .playlistinfo, .add, .update: true
        default: false
        }
    }

    /// The names of the commands ``isExpensive`` marks.
    static let expensiveNames = ["playlistinfo", "add", "update"]

    /// Whether ``ClientSession`` answers this command itself instead of calling the executor.
    public var isHandledBySession: Bool {
        switch self {
        case .ping, .close, .commands, .notcommands, .tagtypes, .idle, .noidle, .binarylimit: true
        default: false
        }
    }

    /// The names `commands` lists, sorted as mpd sorts them. `noidle` and the
    /// `command_list_*` lines are not commands in mpd's table, so they are not listed.
    public static var supportedNames: [String] { CommandTable.listedNames }

    /// Checks a request against the command table and types its arguments.
    ///
    /// Throws mpd's exact errors: `unknown command "x"` (code 5, `{}`), `wrong number of
    /// arguments for "x"`, `too few/many arguments for "x"`, `Integer expected: x`, ...
    public init(_ request: Request) throws(MPDError) {
        self = try CommandTable.command(for: request)
    }
}

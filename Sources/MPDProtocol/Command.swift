/// A request that has been checked against the command table and whose arguments are typed.
///
/// Each case is one row of the command table (``CommandTable``), through its ``Kind``: the row
/// declares its name, argument counts, permission and traits. Cases marked *session* (their
/// rows say so) are answered by ``ClientSession`` itself and never reach a
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
    /// `playid [SONGID]`: play the song with this id (`nil`: as `play`).
    case playid(Int?)
    /// `seek SONGPOS TIME`: play the song at a position from `seconds` on.
    case seek(position: Int, seconds: Double)
    /// `seekid SONGID TIME`: play the song with an id from `seconds` on.
    case seekid(id: Int, seconds: Double)

    // MARK: Status
    /// `status`.
    case status
    /// `currentsong`: the current song's block, or an empty reply.
    case currentsong

    // MARK: Queue
    /// `playlistinfo [POS|START:END]`: song blocks; ``PositionRange/all`` without an argument.
    case playlistinfo(PositionRange)
    /// `add URI [POSITION]`: add a file or directory of the library; `""` (and `/`) mean the whole library.
    case add(uri: String, position: QueuePosition?)
    /// `addid URI [POSITION]`: add one file; the reply is its `Id:`.
    case addid(uri: String, position: QueuePosition?)
    /// `clear`: empty the queue.
    case clear
    /// `delete POS|START:END`: remove songs from the queue.
    case delete(PositionRange)
    /// `deleteid SONGID`.
    case deleteid(Int)
    /// `move FROM[:END] TO`: move songs so the first lands at `TO`.
    case move(PositionRange, to: QueuePosition)
    /// `moveid SONGID TO`.
    case moveid(Int, to: QueuePosition)
    /// `swap POS1 POS2`.
    case swap(Int, Int)
    /// `swapid SONGID1 SONGID2`.
    case swapid(Int, Int)
    /// `shuffle [START:END]`.
    case shuffle(PositionRange)
    /// `prio PRIORITY START:END...`.
    case prio(UInt8, [PositionRange])
    /// `prioid PRIORITY SONGID...`.
    case prioid(UInt8, [Int])
    /// `playlistid [SONGID]`: one song's block, or every song's.
    case playlistid(Int?)
    /// `plchanges VERSION [START:END]`: the songs changed since a queue version.
    case plchanges(version: UInt32, PositionRange)
    /// `plchangesposid VERSION [START:END]`: the same as `cpos`/`Id` pairs.
    case plchangesposid(version: UInt32, PositionRange)
    /// `playlistfind FILTER`: queued songs that match exactly.
    case playlistfind(SongFilter)
    /// `playlistsearch FILTER`: queued songs that match, case folded.
    case playlistsearch(SongFilter)
    /// `playlist`: the queue in the old format, `POS:file: URI` lines.
    case playlist
    /// `rangeid SONGID START:END`: play only this part of the song (``SongTimeRange/whole``: all of it).
    case rangeid(Int, SongTimeRange)
    /// `addtagid SONGID TAG VALUE`: a tag added to a queued remote song (`tag` is a tag name mpd knows).
    case addtagid(Int, tag: String, value: String)
    /// `cleartagid SONGID [TAG]`: a queued remote song's tags removed (`nil`: all of them).
    case cleartagid(Int, tag: String?)

    // MARK: Options and volume
    /// `setvol 0...100`.
    case setvol(Int)
    /// `repeat 0|1`.
    case `repeat`(Bool)
    /// `random 0|1`.
    case random(Bool)
    /// `single 0|1|oneshot`.
    case single(SingleMode)
    /// `consume 0|1|oneshot`.
    case consume(ConsumeMode)
    /// `volume CHANGE`: -100...100 relative to the current volume.
    case volume(Int)
    /// `getvol`.
    case getvol
    /// `crossfade SECONDS`: only 0 is supported (this player is gapless, not cross-fading).
    case crossfade(Int)
    /// `mixrampdb DB`.
    case mixrampdb(Double)
    /// `mixrampdelay SECONDS|nan`; `nil` for `nan` (off).
    case mixrampdelay(Double?)
    /// `replay_gain_mode MODE`.
    case replayGainMode(String)
    /// `replay_gain_status`.
    case replayGainStatus
    /// `clearerror`: forget the player's last error (`status`'s `error:`).
    case clearerror

    // MARK: Partitions
    /// `listpartitions`.
    case listpartitions
    /// `partition NAME`.
    case partition(String)
    /// `newpartition NAME`.
    case newpartition(String)
    /// `delpartition NAME`.
    case delpartition(String)
    /// `moveoutput OUTPUTNAME`: move an output into the client's partition.
    case moveoutput(String)

    // MARK: Client-to-client messages
    /// `subscribe CHANNEL`.
    case subscribe(String)
    /// `unsubscribe CHANNEL`.
    case unsubscribe(String)
    /// `channels`.
    case channels
    /// `sendmessage CHANNEL TEXT`.
    case sendmessage(channel: String, text: String)
    /// `readmessages`.
    case readmessages

    // MARK: Stored playlists
    /// `save NAME [MODE]`.
    case save(String, SaveMode)
    /// `load NAME [START:END [POSITION]]`.
    case load(String, PositionRange, QueuePosition?)
    /// `listplaylists`.
    case listplaylists
    /// `listplaylist NAME [START:END]`.
    case listplaylist(String, PositionRange)
    /// `listplaylistinfo NAME [START:END]`.
    case listplaylistinfo(String, PositionRange)
    /// `playlistadd NAME URI [POSITION]`.
    case playlistadd(String, uri: String, position: Int?)
    /// `playlistclear NAME`.
    case playlistclear(String)
    /// `playlistdelete NAME POS|START:END`.
    case playlistdelete(String, PositionRange)
    /// `playlistmove NAME FROM[:END] TO`.
    case playlistmove(String, PositionRange, to: Int)
    /// `rename NAME NEW_NAME`.
    case rename(String, to: String)
    /// `rm NAME`.
    case rm(String)

    // MARK: Outputs and library
    /// `outputs`.
    case outputs
    /// `enableoutput ID`; ``MPDError/noSuchOutput`` for an unknown id.
    case enableoutput(Int)
    /// `disableoutput ID`; ``MPDError/noSuchOutput`` for an unknown id.
    case disableoutput(Int)
    /// `toggleoutput ID`: enables a disabled output, disables an enabled one;
    /// ``MPDError/noSuchOutput`` for an unknown id.
    case toggleoutput(Int)
    /// `outputset ID NAME VALUE`: set one of an output's runtime attributes.
    case outputset(Int, name: String, value: String)
    /// `update [URI]`: rescan the library (`nil` = all of it); reply `updating_db: N`.
    case update(uri: String?)
    /// `config`: reply `music_directory: ...`.
    case config
    /// `rescan [URI]`: as `update`, reading every file again.
    case rescan(uri: String?)
    /// `lsinfo [URI]`: a directory's subdirectories and songs (and, at the root, stored playlists).
    case lsinfo(String)
    /// `listall [URI]`: every directory and file under a directory, as names.
    case listall(String)
    /// `listallinfo [URI]`: the same with song blocks.
    case listallinfo(String)
    /// `listfiles [URI]`: the files and directories of a directory, as the file system has them.
    case listfiles(String)
    /// `list TAG [FILTER] [group TAG...]`: distinct tag values.
    case list(FilterKey, SongFilter?, groups: [FilterKey])
    /// `find FILTER [sort TAG] [window START:END]`: songs that match exactly.
    case find(SongFilter, sort: SongOrder?, window: PositionRange?)
    /// `search FILTER [sort TAG] [window START:END]`: songs that match, case folded.
    case search(SongFilter, sort: SongOrder?, window: PositionRange?)
    /// `findadd FILTER [position POS]`: queue the songs `find` names.
    case findadd(SongFilter, position: QueuePosition?)
    /// `searchadd FILTER [position POS]`: queue the songs `search` names.
    case searchadd(SongFilter, position: QueuePosition?)
    /// `searchaddpl NAME FILTER [sort TAG] [window START:END] [position POS]`: add the songs
    /// `search` names to a stored playlist (created if any song is added), at `position` or at its end.
    case searchaddpl(String, SongFilter, sort: SongOrder?, window: PositionRange?, position: Int?)
    /// `count FILTER [group TAG]`: how many songs match and their total time.
    case count(SongFilter?, group: FilterKey?)
    /// `stats`.
    case stats
    /// `urlhandlers`: the URL schemes `add` takes besides the music directory (`http://`, `https://`).
    case urlhandlers
    /// `decoders`: the decoder plugins and their suffixes and MIME types.
    case decoders
    /// `albumart URI OFFSET`: a chunk of the cover file (`cover.png`, `cover.jpg`, ...) in the
    /// song's directory, as a binary reply of at most `binarylimit` bytes.
    case albumart(uri: String, offset: Int)
    /// `readcomments URI`: the song file's comment pairs (ID3v2 `TXXX` frames), `NAME: VALUE`.
    case readcomments(uri: String)
    /// `readpicture URI OFFSET`: a chunk of the picture embedded in the song's tag (the first
    /// ID3v2 `APIC`), as a binary reply; an empty reply if it has none.
    case readpicture(uri: String, offset: Int)

    // MARK: Stickers
    /// `sticker get|set|delete|list|find song URI ...`: the arguments as sent (three or more),
    /// typed by ``StickerRequest/parse(_:)`` once the daemon knows it keeps stickers (mpd says
    /// `sticker database is disabled` before it reads them).
    case sticker([String])

    // MARK: Client
    /// `password SECRET`: the permissions the password gives replace the client's; `ACK [3@0]
    /// {password} incorrect password` otherwise. The executor decides (it knows the passwords).
    case password(String)
    /// `kill`: stop the daemon as SIGTERM does; the connection closes without a reply.
    case kill

    // MARK: Location (not in mpd)
    /// `location`: the last fix (`lat`, `lon`, `accuracy`, `altitude`, `speed`, `course`, `time`, `mode`).
    case location
    /// `locations`: the fixes kept (at most 100), oldest first.
    case locations
    /// `locationupdates 0|1|significant`: standard updates off or on, or the significant-change service.
    case locationupdates(LocationUpdatesMode)
    /// `locationaccuracy NAME`: `desiredAccuracy` (`best`, `hundredMeters`, ...; the daemon checks the name).
    case locationaccuracy(String)
    /// `locationdistance METRES|none`: `distanceFilter`; nil for `none`.
    case locationdistance(Double?)
    /// `regions`: the monitored regions, one block each.
    case regions

    // MARK: Loudness (not in mpd)
    /// `loudnessscan [URI]`: measure a file's loudness (the current song without URI) in the
    /// background; the reply is the job's number, idle `loudness` says it is done.
    case loudnessscan(String?)
    /// `loudness [URI]`: the measurement kept of a file (the current song without URI).
    case loudness(String?)
    // MARK: Sleep timer and resume (not in mpd)
    /// `sleep SECONDS|end|chapter|off`: pause after a while, at the item's (or chapter's) end, or cancel.
    case sleep(SleepRequest)
    /// `inprogress`: the items kept part-heard (their `elapsed` stickers), most recent first.
    case inprogress

    // MARK: Playback rate (not in mpd)
    /// `rate R`: the playback rate, from 0.5 to 3.0 (the daemon checks the range, its player's).
    case rate(String)
    /// `pitchalgorithm timeDomain|varispeed`: how a rate other than 1 is played (the daemon checks the name).
    case pitchalgorithm(String)
    /// `skipsilence 0|1`: quiet stretches shortened, or not.
    case skipsilence(Bool)

    // MARK: Chapters (not in mpd)
    /// `chapters [URI]`: the current song's chapters (nil) or the song's at URI, one block each.
    case chapters(uri: String?)
    /// `seekchapter N|next|previous`: to a chapter's start in the current song.
    case seekchapter(ChapterTarget)

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
    /// *session* `binarylimit SIZE`: the most payload bytes of one binary reply (`albumart`, `readpicture`).
    case binarylimit(Int)

    /// Which command this is, without its arguments: the key of its row in the command table
    /// (``CommandTable``) and of its handler in a daemon.
    public var kind: Kind {
        switch self {
        case .play: .play
        case .pause: .pause
        case .next: .next
        case .previous: .previous
        case .stop: .stop
        case .seekcur: .seekcur
        case .playid: .playid
        case .seek: .seek
        case .seekid: .seekid
        case .status: .status
        case .currentsong: .currentsong
        case .playlistinfo: .playlistinfo
        case .add: .add
        case .addid: .addid
        case .clear: .clear
        case .delete: .delete
        case .deleteid: .deleteid
        case .move: .move
        case .moveid: .moveid
        case .swap: .swap
        case .swapid: .swapid
        case .shuffle: .shuffle
        case .prio: .prio
        case .prioid: .prioid
        case .playlistid: .playlistid
        case .plchanges: .plchanges
        case .plchangesposid: .plchangesposid
        case .playlistfind: .playlistfind
        case .playlistsearch: .playlistsearch
        case .playlist: .playlist
        case .rangeid: .rangeid
        case .addtagid: .addtagid
        case .cleartagid: .cleartagid
        case .setvol: .setvol
        case .repeat: .repeat
        case .random: .random
        case .single: .single
        case .consume: .consume
        case .volume: .volume
        case .getvol: .getvol
        case .crossfade: .crossfade
        case .mixrampdb: .mixrampdb
        case .mixrampdelay: .mixrampdelay
        case .replayGainMode: .replayGainMode
        case .replayGainStatus: .replayGainStatus
        case .clearerror: .clearerror
        case .listpartitions: .listpartitions
        case .partition: .partition
        case .newpartition: .newpartition
        case .delpartition: .delpartition
        case .moveoutput: .moveoutput
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .channels: .channels
        case .sendmessage: .sendmessage
        case .readmessages: .readmessages
        case .save: .save
        case .load: .load
        case .listplaylists: .listplaylists
        case .listplaylist: .listplaylist
        case .listplaylistinfo: .listplaylistinfo
        case .playlistadd: .playlistadd
        case .playlistclear: .playlistclear
        case .playlistdelete: .playlistdelete
        case .playlistmove: .playlistmove
        case .rename: .rename
        case .rm: .rm
        case .outputs: .outputs
        case .enableoutput: .enableoutput
        case .disableoutput: .disableoutput
        case .toggleoutput: .toggleoutput
        case .outputset: .outputset
        case .update: .update
        case .config: .config
        case .rescan: .rescan
        case .lsinfo: .lsinfo
        case .listall: .listall
        case .listallinfo: .listallinfo
        case .listfiles: .listfiles
        case .list: .list
        case .find: .find
        case .search: .search
        case .findadd: .findadd
        case .searchadd: .searchadd
        case .searchaddpl: .searchaddpl
        case .count: .count
        case .stats: .stats
        case .urlhandlers: .urlhandlers
        case .decoders: .decoders
        case .albumart: .albumart
        case .readcomments: .readcomments
        case .readpicture: .readpicture
        case .sticker: .sticker
        case .password: .password
        case .kill: .kill
        case .location: .location
        case .locations: .locations
        case .locationupdates: .locationupdates
        case .locationaccuracy: .locationaccuracy
        case .locationdistance: .locationdistance
        case .regions: .regions
        case .loudnessscan: .loudnessscan
        case .loudness: .loudness
        case .sleep: .sleep
        case .inprogress: .inprogress
        case .rate: .rate
        case .pitchalgorithm: .pitchalgorithm
        case .skipsilence: .skipsilence
        case .chapters: .chapters
        case .seekchapter: .seekchapter
        case .ping: .ping
        case .close: .close
        case .commands: .commands
        case .notcommands: .notcommands
        case .tagtypes: .tagtypes
        case .idle: .idle
        case .noidle: .noidle
        case .binarylimit: .binarylimit
        }
    }

    /// The command name as it appears on the wire and in `{command}` of an ACK: its row's.
    public var name: String { kind.name }

    /// Whether the command's work or reply grows with the queue or the library (`playlistinfo`,
    /// `add`, `update`), or reads a file (`albumart`, `readpicture`: up to `binarylimit` bytes,
    /// 8 MiB at most; `sticker`: the SQLite database): a daemon may keep such commands from
    /// piling up ahead of cheap ones. Its row says so.
    public var isExpensive: Bool { kind.isExpensive }

    /// Whether ``ClientSession`` answers this command itself instead of calling the executor.
    public var isHandledBySession: Bool { kind.isHandledBySession }

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

extension Command {
    /// A command without its arguments: one case per case of ``Command``. Its name, its
    /// permission and its traits are its row's in the command table, the only place they are
    /// declared.
    public enum Kind: Int, CaseIterable, Sendable {
        case play
        case pause
        case next
        case previous
        case stop
        case seekcur
        case playid
        case seek
        case seekid
        case status
        case currentsong
        case playlistinfo
        case add
        case addid
        case clear
        case delete
        case deleteid
        case move
        case moveid
        case swap
        case swapid
        case shuffle
        case prio
        case prioid
        case playlistid
        case plchanges
        case plchangesposid
        case playlistfind
        case playlistsearch
        case playlist
        case rangeid
        case addtagid
        case cleartagid
        case setvol
        case `repeat`
        case random
        case single
        case consume
        case volume
        case getvol
        case crossfade
        case mixrampdb
        case mixrampdelay
        case replayGainMode
        case replayGainStatus
        case clearerror
        case listpartitions
        case partition
        case newpartition
        case delpartition
        case moveoutput
        case subscribe
        case unsubscribe
        case channels
        case sendmessage
        case readmessages
        case save
        case load
        case listplaylists
        case listplaylist
        case listplaylistinfo
        case playlistadd
        case playlistclear
        case playlistdelete
        case playlistmove
        case rename
        case rm
        case outputs
        case enableoutput
        case disableoutput
        case toggleoutput
        case outputset
        case update
        case config
        case rescan
        case lsinfo
        case listall
        case listallinfo
        case listfiles
        case list
        case find
        case search
        case findadd
        case searchadd
        case searchaddpl
        case count
        case stats
        case urlhandlers
        case decoders
        case albumart
        case readcomments
        case readpicture
        case sticker
        case password
        case kill
        case location
        case locations
        case locationupdates
        case locationaccuracy
        case locationdistance
        case regions
        case loudnessscan
        case loudness
        case sleep
        case inprogress
        case rate
        case pitchalgorithm
        case skipsilence
        case chapters
        case seekchapter
        case ping
        case close
        case commands
        case notcommands
        case tagtypes
        case idle
        case noidle
        case binarylimit

        /// The name as it appears on the wire, in `commands` and in `{command}` of an ACK.
        public var name: String { CommandTable.row(self).name }
        /// What a client needs to run it (mpd's table's second column).
        public var permission: Permission { CommandTable.row(self).permission }
        /// See ``Command/isExpensive``.
        public var isExpensive: Bool { CommandTable.row(self).traits.contains(.expensive) }
        /// See ``Command/isHandledBySession``.
        public var isHandledBySession: Bool { CommandTable.row(self).traits.contains(.session) }
    }

    /// Whether the reply of the command `name` is a list of entries (songs, outputs, names)
    /// rather than one set of fields; false for a name that is not a command.
    public static func repliesWithList(named name: String) -> Bool {
        CommandTable.entries[name]?.traits.contains(.listReply) ?? false
    }

    /// The names of this daemon's own commands, which mpd has not (``CommandTable/ownRows``).
    public static let namesNotInMPD: Set<String> = Set(CommandTable.ownRows.map(\.name))

    /// The lines a WebSocket client may not send (docs/websocket.md): the commands whose row
    /// says so (`idle`, `noidle`: events come unasked; `close`), and the command-list lines,
    /// which the connection's framing is and JSON messages replace.
    public static let namesNotTakenOverWebSocket: Set<String> =
        Set(CommandTable.rows.filter { $0.traits.contains(.notOverWebSocket) }.map(\.name))
            .union(ClientSession.commandListKeywords)
}

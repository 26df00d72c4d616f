/// The protocol state machine of one client connection, free of I/O.
///
/// The connection handler sends ``greeting`` on connect, feeds every received chunk to
/// ``append(_:)`` and takes the requests a step at a time with ``step()``: the session answers
/// protocol-level lines itself (a run of them per step), and hands back a command or a whole
/// command list that needs the daemon as pending work, run with ``runPending(executor:)`` (on
/// the daemon's thread). It reports every change of the daemon's state to every session with
/// ``notify(_:)``, and performs the returned ``SessionAction``s in order.
/// ``receive(_:executor:)`` does all of this for one chunk at once.
///
/// Taking the requests in steps of bounded output lets the connection stop between them: while
/// its client does not take its replies, it runs none of its further commands (backpressure).
///
/// The session answers the protocol-level commands itself (`ping`, `close`, `idle`, `noidle`,
/// command lists, `commands`, `notcommands`, `tagtypes`, `binarylimit`) and passes all others
/// to the executor. It reproduces mpd 0.23's behaviour:
/// * Input is split into lines however it is chunked; clients pipeline several lines per write.
/// * A line longer than `maxLineLength` bytes closes the connection (mpd's input buffer is full),
///   as soon as that many bytes without a newline have arrived: a client cannot grow the input.
/// * Malformed lines (empty, blank, not starting with a lower-case letter) close the connection
///   silently; a command name with a bad character gets an ACK and then a close.
/// * Command lists are buffered until `command_list_end` (at most `maxCommandListSize` bytes:
///   past it the connection is closed), then run until the first error, whose ACK carries the
///   0-based index; `list_OK` follows each success in `ok` mode.
/// * While idling, only `noidle` is allowed; any other line closes the connection.
///   `noidle` when not idling is ignored without a reply.
///
/// ```swift
/// var session = ClientSession()
/// write(ClientSession.greeting)
/// // on every read:
/// session.append(bytes)
/// reading: while clientTakesItsReplies {
///     switch session.step() {
///     case .needsInput: break reading                      // read more
///     case .handled(let actions): perform(actions)
///     case .ready: perform(session.runPending(executor: daemon))  // on the daemon's queue
///     }
/// }
/// // whenever the engine reports changes (after the command that caused them has returned):
/// for client in clients { for action in client.session.notify([.player]) { client.perform(action) } }
/// // where perform(.send(text)) writes text and perform(.close) flushes and closes.
/// ```
public struct ClientSession: Sendable {
    /// The MPD protocol version the daemon speaks: mpd 0.23.12 announces 0.23.5.
    public static let protocolVersion = "0.23.5"
    /// The first bytes of every connection.
    public static let greeting = "OK MPD \(protocolVersion)\n"

    /// mpd's default `binarylimit`: the payload of one binary reply, until the client sets another.
    public static let defaultBinaryLimit = 8192

    /// mpd's default `max_command_list_size` (2048 KiB).
    public static let defaultMaxCommandListSize = 2048 * 1024

    /// mpd 0.23's longest request line: it reads a client's input into a buffer of 8192 bytes
    /// (`BufferedSocket`) and closes the connection when that buffer is full without a
    /// newline, so a line of 8191 bytes and its `\n` is answered, and a longer one closes.
    public static let defaultMaxLineLength = 8192 - 1

    /// The longest accepted request line in bytes, not counting its `\n`.
    public var maxLineLength: Int { lineBuffer.maxLineLength }
    /// The most bytes a command list may hold (each line counts its length plus one).
    public let maxCommandListSize: Int

    /// The daemon's number for this client, passed to the executor in every ``CommandContext``.
    public var clientID = 0
    /// Whether the session has asked for the connection to be closed; it ignores input from then on.
    public private(set) var isClosed = false
    /// This client's pending changes and idle subscription.
    public private(set) var idleState = IdleState()
    /// The tags this client's song blocks carry (`tagtypes`); all of them on connect.
    public private(set) var tagTypes: Set<TagType> = Set(TagType.allCases)
    /// The most payload bytes of one binary reply this client takes (`binarylimit`).
    public private(set) var binaryLimit = ClientSession.defaultBinaryLimit
    /// What this client may do (mpd's permissions): set by the connection from its listener,
    /// replaced by a `password` the executor accepts (``Reply/grantedPermissions``). A command
    /// it does not allow is answered `ACK [4@0] {cmd} you don't have permission for "cmd"`,
    /// and `commands`/`notcommands` list what it allows and what not.
    public var permissions: Permission = .all
    /// Who the client is, for the executor's per-peer bookkeeping (``CommandContext/peer``).
    public var peer = ""
    /// Whether the client is on this machine's Unix socket, whatever its permissions: mpd's
    /// `Client::IsLocal`, which `config` asks (it tells where the music is on this machine's
    /// file system). TCP and WebSocket clients are not, even from loopback.
    public var isLocal = false
    /// Commands of the table that the daemon cannot run as it is configured (mpd's
    /// `command_available`: `sticker` without a sticker database): `commands` leaves them out,
    /// `notcommands` lists them only for want of a permission, as mpd's do.
    public var unavailableCommands: Set<String> = []

    private var lineBuffer: LineBuffer
    private var commandList: CommandListBuffer?
    /// A request taken from the input that needs ``runPending(executor:)``.
    private var pending: Work?
    /// The line of a pending single command, for ``failedCommands`` if it fails.
    private var pendingLine: [UInt8] = []
    /// The commands answered with an ACK since the last ``takeFailedCommands()``.
    private var failedCommands: [FailedCommand] = []

    /// A command answered with an ACK, for the connection's debug log (mpd logs every command
    /// it processes at its debug level): the request line as the client sent it, except that
    /// a `password`'s argument is never kept, and the ACK line, without its newline.
    public struct FailedCommand: Hashable, Sendable {
        public let line: String
        public let ack: String

        public init(line: String, ack: String) {
            self.line = line
            self.ack = ack
        }
    }

    /// The commands answered with an ACK since the last call, in order; the connection logs
    /// them. A failing command costs the session one entry until then, and a working one nothing.
    public mutating func takeFailedCommands() -> [FailedCommand] {
        guard !failedCommands.isEmpty else { return [] }
        defer { failedCommands = [] }
        return failedCommands
    }

    /// A request line as it may be logged: a `password` line keeps only its command name.
    static func loggable(_ line: some Collection<UInt8>) -> String {
        let name = line.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        if name.elementsEqual(Command.Kind.password.name.utf8) && name.count < line.count { return "password ***" }
        return String(decoding: line, as: UTF8.self)
    }

    private mutating func recordFailure(_ line: some Collection<UInt8>, ack: String) {
        failedCommands.append(FailedCommand(line: Self.loggable(line), ack: String(ack.dropLast())))
    }

    /// How many complete request lines ``step()`` has taken from the input: a connection restarts
    /// its timeout when this changes (mpd's `connection_timeout` restarts on each whole line,
    /// not on each byte).
    public private(set) var linesTaken = 0

    /// Whether the client is waiting in `idle`. mpd suspends its connection timeout meanwhile.
    public var isIdle: Bool { idleState.isWaiting }
    /// Whether a command list is being collected.
    public var isCollectingCommandList: Bool { commandList != nil }
    /// Whether ``step()`` made work ready that has not run yet (``runPending(executor:)`` comes next).
    public var hasPendingWork: Bool { pending != nil }
    /// Whether that work calls the executor (see ``Step/ready(needsExecutor:)``).
    public var pendingWorkNeedsExecutor: Bool { pending?.needsExecutor ?? false }
    /// Whether the pending work holds a command ``Command/isExpensive`` marks.
    public var isPendingWorkExpensive: Bool {
        switch pending {
        case .command(let command): command.isExpensive
        case .list(let list): list.isExpensive
        case nil: false
        }
    }

    /// The playlist names that are URLs (`scheme://…`) in the pending work's `load`,
    /// `listplaylist` and `listplaylistinfo`: a daemon fetches these remote playlists before
    /// it runs the work, off the queue the work runs on.
    public var pendingPlaylistURLs: [String] {
        func url(_ request: Request) -> String? {
            guard CommandTable.entries[request.name]?.traits.contains(.namesPlaylists) == true,
                  let name = request.arguments.first, name.contains("://") else { return nil }
            return name
        }
        switch pending {
        case .command(.load(let name, _, _)), .command(.listplaylist(let name, _)), .command(.listplaylistinfo(let name, _)):
            return name.contains("://") ? [name] : []
        case .list(let list):
            guard list.mayNamePlaylists else { return [] }
            var names: [String] = []
            list.forEachLine { _, line in
                if let request = try? Request.parse(line), let name = url(request) { names.append(name) }
                return true
            }
            return names
        case .command, nil:
            return []
        }
    }

    /// What ``step()`` found at the front of the input.
    public enum Step: Hashable, Sendable {
        /// No complete line is buffered (or the session is closed): ``append(_:)`` more input.
        case needsInput
        /// Lines were handled by the session: perform these actions (there may be none, e.g.
        /// for lines added to a command list, or a `noidle` outside idle).
        case handled([SessionAction])
        /// A command, or a complete command list, is ready: call ``runPending(executor:)``
        /// before the next ``step()``. `needsExecutor` is false for a list of protocol-level
        /// commands only, which never calls the executor (and need not run on its thread).
        case ready(needsExecutor: Bool)
    }

    /// Creates the state of a freshly connected client (send ``greeting`` first).
    ///
    /// - Parameters:
    ///   - maxLineLength: the longest request line accepted, in bytes without the `\n`;
    ///     a longer line closes the connection, as when mpd's input buffer fills up.
    ///   - maxCommandListSize: the most bytes a command list may hold before the connection is closed.
    public init(maxLineLength: Int = ClientSession.defaultMaxLineLength, maxCommandListSize: Int = ClientSession.defaultMaxCommandListSize) {
        lineBuffer = LineBuffer(maxLineLength: maxLineLength)
        self.maxCommandListSize = maxCommandListSize
    }

    // MARK: Input

    /// Buffers received bytes; nothing runs until ``step()``.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !isClosed else { return }
        lineBuffer.append(bytes)
    }

    /// Takes the next complete line from the input: answers it if the session can, or makes
    /// it (or the command list it ends) the pending work.
    ///
    /// Lines the session answers itself are taken several at a time, up to ``stepOutputLimit``
    /// bytes of replies, so a client pipelining `ping`s costs one step per few thousand, not
    /// one per line. When such replies are followed by a line that needs the executor, the
    /// replies come first (``Step/handled(_:)``) and the work is pending: the next `step()`
    /// returns ``Step/ready(needsExecutor:)`` for it.
    public mutating func step() -> Step {
        step { _, _ in nil }
    }

    /// ``step()``, with commands that `inline` answers (a reply body, without `OK`) answered
    /// in the step like the session's own, instead of becoming pending work: for replies the
    /// daemon keeps ready where the connection runs (a kept `status`). Nil: the daemon runs it.
    public mutating func step(answering inline: (Command, CommandContext) -> String?) -> Step {
        if let pending { return .ready(needsExecutor: pending.needsExecutor) }
        guard !isClosed else { return .needsInput }
        var output = Output()
        // The line buffer is moved out while its lines are taken (they point into it).
        var lines = lineBuffer
        lineBuffer = LineBuffer(maxLineLength: lines.maxLineLength)
        let stop = lines.forEachLine { line in
            linesTaken &+= 1
            take(line, into: &output, inline: inline)
            return pending == nil && !isClosed && output.textCount < Self.stepOutputLimit
        }
        lineBuffer = lines
        switch stop {
        case .incomplete where output.isEmpty: return .needsInput
        case .incomplete, .stopped: break
        case .tooLong: close(&output)
        }
        if isClosed { lineBuffer.removeAll() }
        if let pending, output.isEmpty { return .ready(needsExecutor: pending.needsExecutor) }
        return .handled(output.actions)
    }

    /// The most reply bytes one ``step()`` gathers from lines the session answers itself.
    public static let stepOutputLimit = 16 * 1024

    /// Runs the work ``step()`` made ready, calling `executor` for the commands the session
    /// does not handle itself, in order. Returns what to send, and whether to close.
    public mutating func runPending(
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) -> [SessionAction] {
        guard let work = pending else { return [] }
        pending = nil
        var output = Output()
        switch work {
        case .command(let command):
            let line = pendingLine
            pendingLine = []
            report(execute(command, index: 0, inList: false, executor: executor), line: line, into: &output)
        case .list(let list):
            run(list, into: &output, executor: executor)
        }
        return output.actions
    }

    /// Runs the pending work with the daemon's `executor`.
    public mutating func runPending(executor: some CommandExecutor) -> [SessionAction] {
        runPending { command, context throws(MPDError) in try executor.execute(command, context: context) }
    }

    /// Feeds received bytes and runs every complete line, calling `executor` for the commands
    /// the session does not handle itself. Returns what to send, and whether to close, in order.
    public mutating func receive(
        _ bytes: some Collection<UInt8>,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) -> [SessionAction] {
        append(bytes)
        var output = Output()
        while true {
            switch step() {
            case .needsInput: return output.actions
            case .handled(let actions): output.append(actions)
            case .ready: output.append(runPending(executor: executor))
            }
        }
    }

    /// Feeds received bytes, running the daemon's commands with `executor`.
    public mutating func receive(_ bytes: some Collection<UInt8>, executor: some CommandExecutor) -> [SessionAction] {
        receive(bytes) { command, context throws(MPDError) in try executor.execute(command, context: context) }
    }

    /// Records that subsystems changed. Call it for every session, including the one whose
    /// command caused the change. Returns the idle reply if this wakes a waiting `idle`.
    public mutating func notify(_ changed: some Sequence<Subsystem>) -> [SessionAction] {
        guard !isClosed, let reported = idleState.record(changed) else { return [] }
        return [.send(IdleState.reply(reporting: reported))]
    }

    // MARK: Lines

    /// Work the session cannot finish by itself.
    private enum Work: Sendable {
        case command(Command)
        case list(CommandListBuffer)

        var needsExecutor: Bool {
            switch self {
            case .command: true
            case .list(let list): list.needsExecutor
            }
        }
    }

    private mutating func take(_ rawLine: UnsafeBufferPointer<UInt8>, into output: inout Output,
                               inline: (Command, CommandContext) -> String?) {
        let line = Bytes.normalized(rawLine)
        guard let first = line.first, Byte.isLowercaseLetter(first) else {
            return close(&output)  // not the MPD protocol (mpd: "malformed command")
        }
        if Bytes.equal(line, Keyword.noidle) {
            if idleState.cancelWait() { output.send("OK\n") }
            return
        }
        if idleState.isWaiting {
            return close(&output)  // mpd: "command during idle"
        }
        if commandList != nil {
            if Bytes.equal(line, Keyword.listEnd) {
                pending = .list(commandList!)
                commandList = nil
            } else if !commandList!.add(line, limit: maxCommandListSize) {
                close(&output)
            }
            return
        }
        if Bytes.equal(line, Keyword.listBegin) {
            commandList = CommandListBuffer(isOKMode: false)
        } else if Bytes.equal(line, Keyword.listOKBegin) {
            commandList = CommandListBuffer(isOKMode: true)
        } else {
            switch ParsedLine(line, permissions: permissions) {
            case .command(let command):
                if let outcome = answer(command) ?? answerInline(command, inline) {
                    report(outcome, line: line, into: &output)
                } else {
                    pending = .command(command)
                    pendingLine = Array(line)
                }
            case let failed:
                report(outcome(of: failed, index: 0), line: line, into: &output)
            }
        }
    }

    /// Sends the reply of a command outside a list (its request `line`, for the log).
    private mutating func report(_ outcome: Outcome, line: some Collection<UInt8>, into output: inout Output) {
        switch outcome {
        case .success(let body, let binary):
            output.send(body)
            if let binary { output.send(binary: binary) }
            output.send("OK\n")
        case .failure(let error):
            let ack = error.ackLine(index: 0)
            recordFailure(line, ack: ack)
            output.send(ack)
        case .idle(let immediateReply): output.send(immediateReply)
        case .finish(let lastWords):
            if lastWords.hasPrefix("ACK ") { recordFailure(line, ack: lastWords) }
            output.send(lastWords)
            close(&output)
        }
    }

    private mutating func run(
        _ list: CommandListBuffer, into output: inout Output,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) {
        var ended = false
        list.forEachLine { index, line in
            let outcome: Outcome
            switch ParsedLine(line, permissions: permissions) {
            case .command(let command):
                outcome = answer(command) ?? execute(command, index: index, inList: true, executor: executor)
            case let failed:
                outcome = self.outcome(of: failed, index: index)
            }
            guard case .success(let body, let binary) = outcome else {
                finishList(outcome, index: index, line: line, into: &output)
                ended = true
                return false
            }
            if !body.isEmpty { output.send(body) }
            if let binary { output.send(binary: binary) }
            if list.isOKMode { output.send("list_OK\n") }
            return true
        }
        if !ended { output.send("OK\n") }
    }

    /// Ends a list's run at the command at `index` (its request `line`), which did not succeed.
    private mutating func finishList(_ outcome: Outcome, index: Int, line: some Collection<UInt8>, into output: inout Output) {
        switch outcome {
        case .success:
            preconditionFailure("a successful command does not end a list")
        case .failure(let error):
            let ack = error.ackLine(index: index)
            recordFailure(line, ack: ack)
            output.send(ack)
        case .idle(let immediateReply):
            // mpd enters idle mode; the rest of the list is dropped and no OK follows.
            output.send(immediateReply)
        case .finish(let lastWords):
            if lastWords.hasPrefix("ACK ") { recordFailure(line, ack: lastWords) }
            output.send(lastWords)
            close(&output)
        }
    }

    // MARK: Commands

    private enum Outcome {
        /// The reply body, and the payload of a binary reply; the caller adds `OK` or `list_OK`.
        case success(String, binary: [UInt8]? = nil)
        case failure(MPDError)
        /// The client now idles; the text is the immediate idle reply, if any.
        case idle(String)
        /// Send the text (maybe empty), then close the connection.
        case finish(String)
    }

    private func outcome(of failed: ParsedLine, index: Int) -> Outcome {
        switch failed {
        case .command: preconditionFailure("a command is answered or executed")
        case .failure(let error): .failure(error)
        case .fatal(let ack): .finish(ack?.ackLine(index: index) ?? "")
        }
    }

    /// The session's own answer to a protocol-level command; nil for the daemon's commands.
    private mutating func answer(_ command: Command) -> Outcome? {
        switch command {
        case .ping, .noidle:
            return .success("")
        case .notcommands:
            return .success(Command.supportedNames.filter { !permissions.allows(commandNamed: $0) }
                .map { "command: \($0)\n" }.joined())
        case .binarylimit(let limit):
            binaryLimit = limit
            return .success("")
        case .close:
            return .finish("")
        case .commands:
            var names = permissions == .all ? Command.supportedNames
                : Command.supportedNames.filter { permissions.allows(commandNamed: $0) }
            if !unavailableCommands.isEmpty { names.removeAll(where: unavailableCommands.contains) }
            return .success(names.map { "command: \($0)\n" }.joined())
        case .tagtypes(let tagRequest):
            return .success(apply(tagRequest))
        case .idle(let subsystems):
            return .idle(idleState.wait(for: subsystems).map(IdleState.reply(reporting:)) ?? "")
        default:
            return nil
        }
    }

    private func answerInline(_ command: Command, _ inline: (Command, CommandContext) -> String?) -> Outcome? {
        let context = CommandContext(tagTypes: tagTypes, listIndex: nil, clientID: clientID, binaryLimit: binaryLimit,
                                     peer: peer, isLocal: isLocal)
        return inline(command, context).map { .success($0) }
    }

    private mutating func execute(
        _ command: Command, index: Int, inList: Bool,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) -> Outcome {
        let context = CommandContext(tagTypes: tagTypes, listIndex: inList ? index : nil, clientID: clientID,
                                     binaryLimit: binaryLimit, peer: peer, isLocal: isLocal)
        do {
            let reply = try executor(command, context)
            if let granted = reply.grantedPermissions { permissions = granted }
            if reply.closesConnection { return .finish(reply.rendered(tagTypes: tagTypes)) }
            return .success(reply.rendered(tagTypes: tagTypes), binary: reply.binary)
        } catch {
            return .failure(error.attributed(to: command.name))
        }
    }

    private mutating func apply(_ request: TagTypesRequest) -> String {
        switch request {
        case .list:
            return TagType.allCases.filter(tagTypes.contains).map { "tagtype: \($0.protocolName)\n" }.joined()
        case .clear: tagTypes = []
        case .all: tagTypes = Set(TagType.allCases)
        case .enable(let tags): tagTypes.formUnion(tags)
        case .disable(let tags): tagTypes.subtract(tags)
        }
        return ""
    }

    // MARK: Helpers

    private mutating func close(_ output: inout Output) {
        isClosed = true
        commandList = nil
        pending = nil
        pendingLine = []
        lineBuffer.removeAll()
        output.close()
    }

    private enum Keyword {
        static let noidle = Array(Command.Kind.noidle.name.utf8)
        static let listBegin = Array(listBeginName.utf8)
        static let listOKBegin = Array(listOKBeginName.utf8)
        static let listEnd = Array(listEndName.utf8)
        static let listBeginName = "command_list_begin"
        static let listOKBeginName = "command_list_ok_begin"
        static let listEndName = "command_list_end"
    }

    /// The lines that begin and end a command list: the connection's framing, not commands.
    static let commandListKeywords = [Keyword.listBeginName, Keyword.listOKBeginName, Keyword.listEndName]

    /// Collects outgoing text, merging consecutive writes into one action.
    private struct Output {
        private var finished: [SessionAction] = []
        private var text = ""

        mutating func send(_ more: String) {
            text += more
        }

        /// `binary: N`, the bytes, and a newline (the bytes are not text: an action of their own).
        mutating func send(binary: [UInt8]) {
            text += "binary: \(binary.count)\n"
            finished.append(.send(text))
            text = ""
            finished.append(.sendBytes(binary + [Byte.newline]))
        }

        /// Whether nothing was sent or closed.
        var isEmpty: Bool { text.isEmpty && finished.isEmpty }

        /// The bytes of text gathered since the last binary reply.
        var textCount: Int { text.utf8.count }

        mutating func close() {
            if !text.isEmpty { finished.append(.send(text)) }
            text = ""
            finished.append(.close)
        }

        mutating func append(_ actions: [SessionAction]) {
            for action in actions {
                switch action {
                case .send(let more): send(more)
                case .sendBytes(let bytes):
                    if !text.isEmpty { finished.append(.send(text)) }
                    text = ""
                    finished.append(.sendBytes(bytes))
                case .close: close()
                }
            }
        }

        var actions: [SessionAction] {
            text.isEmpty ? finished : finished + [.send(text)]
        }
    }
}

/// The protocol state machine of one client connection, free of I/O.
///
/// The connection handler sends ``greeting`` on connect, feeds every received chunk to
/// ``receive(_:executor:)``, reports every change of the daemon's state to every session with
/// ``notify(_:)``, and performs the returned ``SessionAction``s in order.
///
/// The session answers the protocol-level commands itself (`ping`, `close`, `idle`, `noidle`,
/// command lists, `commands`, `notcommands`, `tagtypes`, `binarylimit`) and passes all others
/// to the executor. It reproduces mpd 0.23's behaviour:
/// * Input is split into lines however it is chunked; clients pipeline several lines per write.
/// * A line longer than `maxLineLength` bytes closes the connection (mpd's input buffer is full).
/// * Malformed lines (empty, blank, not starting with a lower-case letter) close the connection
///   silently; a command name with a bad character gets an ACK and then a close.
/// * Command lists are buffered until `command_list_end`, then run until the first error,
///   whose ACK carries the 0-based index; `list_OK` follows each success in `ok` mode.
/// * While idling, only `noidle` is allowed; any other line closes the connection.
///   `noidle` when not idling is ignored without a reply.
///
/// ```swift
/// var session = ClientSession()
/// write(ClientSession.greeting)
/// // on every read:
/// for action in session.receive(bytes, executor: daemon) { perform(action) }
/// // whenever the engine reports changes (after the command that caused them has returned):
/// for client in clients { for action in client.session.notify([.player]) { client.perform(action) } }
/// // where perform(.send(text)) writes text and perform(.close) flushes and closes.
/// ```
public struct ClientSession: Sendable {
    /// The first bytes of every connection. mpd 0.23.12 announces protocol version 0.23.5.
    public static let greeting = "OK MPD 0.23.5\n"

    /// mpd's default `max_command_list_size` (2048 KiB).
    public static let defaultMaxCommandListSize = 2048 * 1024

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

    private var lineBuffer: LineBuffer
    private var commandList: CommandListBuffer?

    /// Whether the client is waiting in `idle`. mpd suspends its connection timeout meanwhile.
    public var isIdle: Bool { idleState.isWaiting }
    /// Whether a command list is being collected.
    public var isCollectingCommandList: Bool { commandList != nil }

    /// Creates the state of a freshly connected client (send ``greeting`` first).
    ///
    /// - Parameters:
    ///   - maxLineLength: the longest request line accepted, in bytes without the `\n`;
    ///     a longer line closes the connection, as when mpd's input buffer fills up.
    ///   - maxCommandListSize: the most bytes a command list may hold before the connection is closed.
    public init(maxLineLength: Int = 4096, maxCommandListSize: Int = ClientSession.defaultMaxCommandListSize) {
        lineBuffer = LineBuffer(maxLineLength: maxLineLength)
        self.maxCommandListSize = maxCommandListSize
    }

    // MARK: Input

    /// Feeds received bytes and runs every complete line, calling `executor` for the commands
    /// the session does not handle itself. Returns what to send, and whether to close, in order.
    public mutating func receive(
        _ bytes: some Collection<UInt8>,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) -> [SessionAction] {
        guard !isClosed else { return [] }
        var output = Output()
        lineBuffer.append(bytes)
        reading: while !isClosed {
            switch lineBuffer.nextLine() {
            case .line(let line):
                process(line, into: &output, executor: executor)
            case .tooLong:
                close(&output)
            case .incomplete:
                break reading
            }
        }
        if isClosed { lineBuffer.removeAll() }
        return output.actions
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

    private mutating func process(
        _ rawLine: ArraySlice<UInt8>, into output: inout Output,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) {
        let line = Self.normalized(rawLine)
        guard let first = line.first, Byte.isLowercaseLetter(first) else {
            return close(&output)  // not the MPD protocol (mpd: "malformed command")
        }
        if line.elementsEqual(Keyword.noidle) {
            if idleState.cancelWait() { output.send("OK\n") }
            return
        }
        if idleState.isWaiting {
            return close(&output)  // mpd: "command during idle"
        }
        if var list = commandList {
            if line.elementsEqual(Keyword.listEnd) {
                commandList = nil
                run(list, into: &output, executor: executor)
            } else if list.add(line, limit: maxCommandListSize) {
                commandList = list
            } else {
                close(&output)
            }
            return
        }
        if line.elementsEqual(Keyword.listBegin) {
            commandList = CommandListBuffer(isOKMode: false)
        } else if line.elementsEqual(Keyword.listOKBegin) {
            commandList = CommandListBuffer(isOKMode: true)
        } else {
            switch run(line, index: 0, inList: false, executor: executor) {
            case .success(let body): output.send(body + "OK\n")
            case .failure(let error): output.send(error.ackLine(index: 0))
            case .idle(let immediateReply): output.send(immediateReply)
            case .finish(let lastWords):
                output.send(lastWords)
                close(&output)
            }
        }
    }

    private mutating func run(
        _ list: CommandListBuffer, into output: inout Output,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) {
        for (index, line) in list.lines.enumerated() {
            switch run(line[...], index: index, inList: true, executor: executor) {
            case .success(let body):
                output.send(list.isOKMode ? body + "list_OK\n" : body)
            case .failure(let error):
                return output.send(error.ackLine(index: index))
            case .idle(let immediateReply):
                // mpd enters idle mode; the rest of the list is dropped and no OK follows.
                return output.send(immediateReply)
            case .finish(let lastWords):
                output.send(lastWords)
                return close(&output)
            }
        }
        output.send("OK\n")
    }

    // MARK: Commands

    private enum Outcome {
        /// The reply body; the caller adds `OK` or `list_OK`.
        case success(String)
        case failure(MPDError)
        /// The client now idles; the text is the immediate idle reply, if any.
        case idle(String)
        /// Send the text (maybe empty), then close the connection.
        case finish(String)
    }

    private mutating func run(
        _ line: ArraySlice<UInt8>, index: Int, inList: Bool,
        executor: (Command, CommandContext) throws(MPDError) -> Reply
    ) -> Outcome {
        let request: Request
        do {
            request = try Request.parse(line)
        } catch {
            switch error {
            case .malformed: return .finish("")
            case .invalidCommandName(let ack): return .finish(ack.ackLine(index: index))
            case .invalidArgument(let ack): return .failure(ack)
            }
        }

        let command: Command
        do {
            command = try Command(request)
        } catch {
            return .failure(error)
        }

        switch command {
        case .ping, .notcommands, .binarylimit, .noidle:
            return .success("")
        case .close:
            return .finish("")
        case .commands:
            return .success(Command.supportedNames.map { "command: \($0)\n" }.joined())
        case .tagtypes(let tagRequest):
            return .success(apply(tagRequest))
        case .idle(let subsystems):
            return .idle(idleState.wait(for: subsystems).map(IdleState.reply(reporting:)) ?? "")
        default:
            let context = CommandContext(tagTypes: tagTypes, listIndex: inList ? index : nil, clientID: clientID)
            do {
                return .success(try executor(command, context).rendered(tagTypes: tagTypes))
            } catch {
                return .failure(error.attributed(to: command.name))
            }
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
        output.close()
    }

    /// The line as mpd sees it: cut at a NUL byte, trailing white space (and `\r`) removed.
    private static func normalized(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var line = line
        if let nul = line.firstIndex(of: 0) { line = line[..<nul] }
        while let last = line.last, Byte.isWhitespaceOrNull(last) { line = line.dropLast() }
        return line
    }

    private enum Keyword {
        static let noidle = Array("noidle".utf8)
        static let listBegin = Array("command_list_begin".utf8)
        static let listOKBegin = Array("command_list_ok_begin".utf8)
        static let listEnd = Array("command_list_end".utf8)
    }

    /// Collects outgoing text, merging consecutive writes into one action.
    private struct Output {
        private var finished: [SessionAction] = []
        private var text = ""

        mutating func send(_ more: String) {
            text += more
        }

        mutating func close() {
            if !text.isEmpty { finished.append(.send(text)) }
            text = ""
            finished.append(.close)
        }

        var actions: [SessionAction] {
            text.isEmpty ? finished : finished + [.send(text)]
        }
    }
}

/// What one request line (normalized: no trailing whitespace) turned into: a command, or how
/// the session answers a line that does not parse.
enum ParsedLine: Sendable {
    case command(Command)
    /// An argument or command-table error: its ACK is sent and the connection stays open.
    case failure(MPDError)
    /// The connection must be closed: silently (not the MPD protocol: `nil`), or after the
    /// ACK of an invalid command name.
    case fatal(MPDError?)

    /// - Parameter permissions: what the client may do; a command of the table it may not use
    ///   is refused before its arguments are checked, as mpd's `command_check_request` does.
    init(_ line: UnsafeBufferPointer<UInt8>, permissions: Permission = .all) {
        if let argumentless = CommandTable.argumentlessCommand(named: line) {
            if permissions != .all, !permissions.isSuperset(of: argumentless.permission) {
                self = .failure(Permission.refusal(of: argumentless.command.name))
                return
            }
            self = .command(argumentless.command)
            return
        }
        let request: Request
        do {
            request = try Request.parse(line)
        } catch {
            switch error {
            case .malformed: self = .fatal(nil)
            case .invalidCommandName(let ack): self = .fatal(ack)
            case .invalidArgument(let ack): self = .failure(ack)
            }
            return
        }
        guard let entry = CommandTable.entries[request.name] else {
            self = .failure(MPDError(.unknown, "unknown command \"\(request.name)\""))
            return
        }
        if permissions != .all, !permissions.isSuperset(of: entry.permission) {
            self = .failure(Permission.refusal(of: entry.name))
            return
        }
        do {
            self = .command(try CommandTable.command(entry, request.arguments))
        } catch {
            self = .failure(error)
        }
    }
}

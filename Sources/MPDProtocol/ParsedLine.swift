/// What one request line (normalized: no trailing whitespace) turned into: a command, or how
/// the session answers a line that does not parse.
enum ParsedLine: Sendable {
    case command(Command)
    /// An argument or command-table error: its ACK is sent and the connection stays open.
    case failure(MPDError)
    /// The connection must be closed: silently (not the MPD protocol: `nil`), or after the
    /// ACK of an invalid command name.
    case fatal(MPDError?)

    init(_ line: UnsafeBufferPointer<UInt8>) {
        if let command = CommandTable.argumentlessCommand(named: line) {
            self = .command(command)
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
        do {
            self = .command(try Command(request))
        } catch {
            self = .failure(error)
        }
    }
}

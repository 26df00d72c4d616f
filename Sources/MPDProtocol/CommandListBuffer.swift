/// The lines of a command list between `command_list_(ok_)begin` and `command_list_end`.
struct CommandListBuffer: Sendable {
    /// `command_list_ok_begin`: send `list_OK` after each successful command.
    let isOKMode: Bool
    private(set) var lines: [[UInt8]] = []
    /// mpd counts each line's length plus one against `max_command_list_size`.
    private var size = 0

    init(isOKMode: Bool) {
        self.isOKMode = isOKMode
    }

    /// Adds a line; returns `false` if the list would exceed `limit` bytes (mpd then closes the connection).
    mutating func add(_ line: ArraySlice<UInt8>, limit: Int) -> Bool {
        size += line.count + 1
        guard size <= limit else { return false }
        lines.append(Array(line))
        return true
    }
}

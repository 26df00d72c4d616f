/// The lines of a command list between `command_list_(ok_)begin` and `command_list_end`.
///
/// The lines are kept back to back in one byte array, as received (normalized): adding one
/// costs the same whatever the list's length (the buffer is mutated in place, never copied),
/// so collecting a list is linear in its size, and its memory is the list's bytes plus one
/// integer per line. They are parsed when the list runs, where it runs (off the event loop).
struct CommandListBuffer: Sendable {
    /// `command_list_ok_begin`: send `list_OK` after each successful command.
    let isOKMode: Bool
    private var bytes: [UInt8] = []
    /// Where each line ends in `bytes`.
    private var ends: [Int] = []
    /// Whether a line may need the daemon: its first word is not a protocol-level command
    /// name. A list of `ping`s can run without the daemon's queue.
    private(set) var needsExecutor = false
    /// Whether a line is a command ``Command/isExpensive`` marks (by its first word).
    private(set) var isExpensive = false
    /// mpd counts each line's length plus one against `max_command_list_size`.
    private var size = 0

    init(isOKMode: Bool) {
        self.isOKMode = isOKMode
    }

    /// Adds a line; returns `false` if the list would exceed `limit` bytes (mpd then closes the connection).
    mutating func add(_ line: UnsafeBufferPointer<UInt8>, limit: Int) -> Bool {
        size += line.count + 1
        guard size <= limit else { return false }
        bytes.append(contentsOf: line)
        ends.append(bytes.count)
        let name = Bytes.firstWord(line)
        if !needsExecutor { needsExecutor = !CommandTable.isProtocolLevelName(name) }
        if needsExecutor && !isExpensive { isExpensive = CommandTable.isExpensiveName(name) }
        return true
    }

    /// Calls `body` with each line's index and bytes (valid during the call), in order,
    /// until it returns false.
    func forEachLine(_ body: (Int, UnsafeBufferPointer<UInt8>) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var index = 0
            while index < ends.count {
                let end = ends[index]
                guard body(index, UnsafeBufferPointer(rebasing: buffer[start..<end])) else { return }
                start = end
                index += 1
            }
        }
    }
}

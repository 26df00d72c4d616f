/// The lines of a command list between `command_list_(ok_)begin` and `command_list_end`.
///
/// The lines are kept back to back in one byte array, as received (normalized), each ended by
/// its newline (a line never holds one): adding one costs the same whatever the list's length
/// (the buffer is mutated in place, never copied), so collecting a list is linear in its size,
/// and its memory is the list's bytes. (No second array of where each line ended: for a list
/// of short lines it would double what the list grows by, and its growth would cost the event
/// loop most of a long list's time.) They are parsed
/// when the list runs, where it runs (off the event loop).
struct CommandListBuffer: Sendable {
    /// `command_list_ok_begin`: send `list_OK` after each successful command.
    let isOKMode: Bool
    /// The lines, each followed by a newline.
    private var bytes: [UInt8] = []
    /// Whether a line may need the daemon: its first word is not a protocol-level command
    /// name. A list of `ping`s can run without the daemon's queue.
    private(set) var needsExecutor = false
    /// Whether a line is a command ``Command/isExpensive`` marks (by its first word).
    private(set) var isExpensive = false
    /// Whether a line's first word names a command that may name a remote playlist (`load`,
    /// `listplaylist`, `listplaylistinfo`: their rows say so), which the daemon fetches before the list runs
    /// (``ClientSession/pendingPlaylistURLs``): a list without one is not parsed for them on the
    /// event loop (a list of 64k `ping`s was, line by line, holding up other clients' `status`).
    private(set) var mayNamePlaylists = false
    /// mpd counts each line's length plus one against `max_command_list_size`.
    private var size = 0
    /// Where the last line's first word lies in ``bytes``: a line with the same first word
    /// (a list is mostly one command over and over) changes none of the flags above, so it
    /// is not looked up again.
    private var lastName = 0..<0

    init(isOKMode: Bool) {
        self.isOKMode = isOKMode
    }

    /// Adds a line; returns `false` if the list would exceed `limit` bytes (mpd then closes the connection).
    mutating func add(_ line: UnsafeBufferPointer<UInt8>, limit: Int) -> Bool {
        size += line.count + 1
        guard size <= limit else { return false }
        let name = Bytes.firstWord(line)
        let repeated = !lastName.isEmpty && bytes.withUnsafeBufferPointer {
            Bytes.equal(name, Bytes.Line(start: $0.baseAddress! + lastName.lowerBound, count: lastName.count))
        }
        lastName = bytes.count..<(bytes.count + name.count)
        bytes.append(contentsOf: line)
        bytes.append(UInt8(ascii: "\n"))
        if repeated { return true }
        if !needsExecutor { needsExecutor = !CommandTable.isProtocolLevelName(name) }
        if needsExecutor && !isExpensive { isExpensive = CommandTable.isExpensiveName(name) }
        if !mayNamePlaylists { mayNamePlaylists = CommandTable.isPlaylistNamingName(name) }
        return true
    }

    /// Calls `body` with each line's index and bytes (valid during the call), in order,
    /// until it returns false.
    func forEachLine(_ body: (Int, UnsafeBufferPointer<UInt8>) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            var index = 0
            while let end = Bytes.index(of: Byte.newline, in: buffer, from: start) {
                guard body(index, UnsafeBufferPointer(start: buffer.baseAddress! + start, count: end - start)) else { return }
                start = end + 1
                index += 1
            }
        }
    }
}

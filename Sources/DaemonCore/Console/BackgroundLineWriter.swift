import CShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes the `Background: %.2f` lines of the 10 ms time observer, which runs on the
/// player's clock thread: it must never block there.
///
/// A line is formatted on the stack by the C library's `snprintf` (the text
/// `String(format: "Background: %.2f", seconds)` gives, without Foundation's formatter
/// or an allocation) and written by one system call that does not wait (``WriteMethod``).
/// What the descriptor does not take at once waits, whole, in a bounded buffer that a later
/// line (or ``flushPending()``) writes first; beyond ``pendingLimit`` bytes the oldest lines
/// are dropped and counted, and `dropped` is called once with the count when output resumes.
/// The descriptor stays blocking (its open file description is shared with the parent).
package final class BackgroundLineWriter: Sendable {
    /// The most bytes kept while the descriptor is full; one pipe write of up to this
    /// many bytes is atomic, so a batch of whole lines goes out whole.
    static let pendingLimit = Int(PIPE_BUF)

    private struct State: ~Copyable {
        /// Whole lines waiting, oldest first: `bytes[0..<count]`.
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: BackgroundLineWriter.pendingLimit)
        var count = 0
        var droppedLines = 0
        /// How lines are written: chosen for the descriptor, and changed once if the kernel refuses it.
        var method: WriteMethod

        deinit { bytes.deallocate() }

        /// Appends `line` (whole lines) to the waiting ones, dropping the oldest whole lines to make room.
        mutating func keep(_ line: UnsafeRawBufferPointer) {
            guard !line.isEmpty, line.count <= BackgroundLineWriter.pendingLimit else { return }
            var excess = count + line.count - BackgroundLineWriter.pendingLimit
            if excess > 0 {
                // Drop whole lines from the front until the new ones fit.
                var cut = 0
                while excess > 0 || bytes[cut - 1] != UInt8(ascii: "\n") {
                    if bytes[cut] == UInt8(ascii: "\n") { droppedLines += 1 }
                    cut += 1
                    excess -= 1
                }
                count -= cut
                if count > 0 { memmove(bytes, bytes + cut, count) }
            }
            UnsafeMutableRawPointer(bytes + count).copyMemory(from: line.baseAddress!, byteCount: line.count)
            count += line.count
        }
    }

    private let descriptor: Int32
    private let dropped: @Sendable (Int) -> Void
    private let state: Mutex<State>
    private let hasPending = Atomic<Bool>(false)

    /// Writes to `descriptor`; `dropped` is told how many lines were lost once output resumes
    /// after lines had to be dropped (it runs on the writing thread: it should not block).
    package convenience init(descriptor: Int32 = STDOUT_FILENO, dropped: @escaping @Sendable (Int) -> Void) {
        self.init(descriptor: descriptor, method: WriteMethod(for: descriptor), dropped: dropped)
    }

    /// As ``init(descriptor:dropped:)``, starting with `method` (tests: a method the
    /// descriptor's kernel refuses).
    init(descriptor: Int32, method: WriteMethod, dropped: @escaping @Sendable (Int) -> Void) {
        self.descriptor = descriptor
        self.dropped = dropped
        state = Mutex(State(method: method))
    }

    /// How a line reaches the descriptor without the clock thread waiting on it.
    ///
    /// The daemon's stdout in the background is a pipe (a shell's, the bench's) or a socket
    /// (the journal's), written 100 times a second: one system call a line, not two, is a
    /// measurable part of what the background costs (a `poll` before each write took a large
    /// share of the writer's time on the clock thread).
    enum WriteMethod: Equatable {
        /// One `pwritev2` with `RWF_NOWAIT` (``cshims_write_nowait``), which fails with EAGAIN
        /// where a write would wait: pipes, sockets, terminals.
        case nonBlocking
        /// `poll` for room, then `write`: where the kernel refuses `RWF_NOWAIT` (EOPNOTSUPP),
        /// found at the first line.
        case polled
        /// `write` alone: a regular file, which `poll` always reports writable, and on which
        /// a file system that does take `RWF_NOWAIT` for buffered writes may fail it with
        /// EAGAIN whenever the page is not cached (lines would wait for no reader).
        case plain

        init(for descriptor: Int32) {
            var status = stat()
            let isRegularFile = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
            self = isRegularFile ? .plain : .nonBlocking
        }
    }

    /// Writes `Background: <seconds, 2 decimals>` and a newline, or keeps it for later.
    package func line(seconds: Double) {
        withUnsafeTemporaryAllocation(byteCount: Self.longestLine, alignment: 1) { buffer in
            append(UnsafeRawBufferPointer(rebasing: buffer[..<Self.format(seconds, into: buffer)]))
        }
    }

    /// How lines are written now (tests).
    var method: WriteMethod { state.withLock { $0.method } }

    /// Writes the lines still waiting, if the descriptor takes them now.
    package func flushPending() {
        guard hasPending.load(ordering: .relaxed) else { return }
        append(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Queues `line` (whole lines, possibly none) behind what waits and writes what it can.
    private func append(_ line: UnsafeRawBufferPointer) {
        // Crosses into the lock as an address (the bytes are only read there, during this call).
        let (address, length) = (Int(bitPattern: line.baseAddress), line.count)
        let lost: Int? = state.withLock { state in
            let line = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: length)
            if state.count == 0 && !line.isEmpty {
                // The usual case: nothing waits, so the line goes straight out.
                let written = write(line, method: &state.method)
                if written == line.count { return nil }
                state.keep(UnsafeRawBufferPointer(rebasing: line[written...]))
            } else {
                state.keep(line)
                let written = write(UnsafeRawBufferPointer(start: state.bytes, count: state.count), method: &state.method)
                state.count -= written
                if state.count > 0 { memmove(state.bytes, state.bytes + written, state.count) }
            }
            hasPending.store(state.count > 0, ordering: .relaxed)
            guard state.count == 0, state.droppedLines > 0 else { return nil }
            defer { state.droppedLines = 0 }
            return state.droppedLines
        }
        if let lost { dropped(lost) }
    }

    /// True if a write of up to ``pendingLimit`` bytes would not block now.
    private func writable() -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        while true {
            let ready = poll(&entry, 1, 0)
            if ready >= 0 { return ready == 1 && entry.revents & Int16(POLLOUT) != 0 }
            if errno != EINTR { return false }
        }
    }

    /// Writes what the descriptor takes now, by `method` (which becomes ``WriteMethod/polled``
    /// if the kernel refuses it); returns the bytes done with: those written (none if it would
    /// wait), or all of them on an error (a closed or failing output loses them, as a plain write would).
    private func write(_ bytes: UnsafeRawBufferPointer, method: inout WriteMethod) -> Int {
        while true {
            if method == .polled && !writable() { return 0 }
            let written = method == .nonBlocking
                ? cshims_write_nowait(descriptor, bytes.baseAddress, bytes.count)
                : Glibc.write(descriptor, bytes.baseAddress, bytes.count)
            if written >= 0 { return written }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN { return 0 }
            // The kernel does not take the flag for this descriptor: poll and write from now on.
            guard method == .nonBlocking, error == EOPNOTSUPP || error == EINVAL || error == ENOSYS else { return bytes.count }
            method = .polled
        }
    }

    // MARK: - Formatting

    private static let prefix: StaticString = "Background: "
    /// The prefix, `%.2f` of the largest finite Double (312 characters), and the newline.
    static let longestLine = 400

    /// Writes `Background: <seconds as %.2f>` and a newline into `buffer` (at least
    /// ``longestLine`` bytes); returns its length.
    static func format(_ seconds: Double, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= longestLine)
        let start = prefix.utf8CodeUnitCount
        buffer.copyMemory(from: UnsafeRawBufferPointer(start: prefix.utf8Start, count: start))
        let room = buffer.count - start - 1
        let digits = buffer.baseAddress!.advanced(by: start).withMemoryRebound(to: CChar.self, capacity: room) {
            Int(cshims_format_hundredths($0, room, seconds))
        }
        let length = start + min(digits, room - 1)
        buffer[length] = UInt8(ascii: "\n")
        return length + 1
    }
}

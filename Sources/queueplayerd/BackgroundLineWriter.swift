import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes the `Background: %.2f` lines of the 10 ms time observer, which runs on the
/// player's clock thread: it must never block there.
///
/// A line is formatted by hand into a reused buffer (the same text `String(format:
/// "Background: %.2f", seconds)` gives, without Foundation's formatter or an allocation)
/// and written with one `write(2)` only when `poll` says the descriptor takes it without
/// blocking. Otherwise it waits, whole, in a bounded buffer that a later line (or
/// ``flushPending()``) writes first; beyond ``pendingLimit`` bytes the oldest lines are
/// dropped and counted, and `dropped` is called once with the count when output resumes.
/// The descriptor stays blocking (its open file description is shared with the parent).
final class BackgroundLineWriter: Sendable {
    /// The most bytes kept while the descriptor is full; one pipe write of up to this
    /// many bytes is atomic, so a batch of whole lines goes out whole.
    static let pendingLimit = Int(PIPE_BUF)

    private struct State: ~Copyable {
        /// Whole lines waiting, oldest first: `bytes[0..<count]`.
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: BackgroundLineWriter.pendingLimit)
        var count = 0
        var droppedLines = 0

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
    private let state = Mutex(State())
    private let hasPending = Atomic<Bool>(false)

    /// Writes to `descriptor`; `dropped` is told how many lines were lost once output resumes
    /// after lines had to be dropped (it runs on the writing thread: it should not block).
    init(descriptor: Int32 = STDOUT_FILENO, dropped: @escaping @Sendable (Int) -> Void) {
        self.descriptor = descriptor
        self.dropped = dropped
    }

    /// Writes `Background: <seconds, 2 decimals>` and a newline, or keeps it for later.
    func line(seconds: Double) {
        var line = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let formatted = withUnsafeMutableBytes(of: &line) { buffer in
            Self.format(seconds, into: buffer).map { append(UnsafeRawBufferPointer(rebasing: buffer[..<$0])) } != nil
        }
        if !formatted {
            // Not finite, or beyond any audible position: rare enough for the C library.
            var text = Array("Background: \(Self.slowFormat(seconds))\n".utf8)
            text.withUnsafeMutableBytes { append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Writes the lines still waiting, if the descriptor takes them now.
    func flushPending() {
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
                let written = writable() ? write(line) : 0
                if written == line.count { return nil }
                state.keep(UnsafeRawBufferPointer(rebasing: line[written...]))
            } else {
                state.keep(line)
                if writable() {
                    let written = write(UnsafeRawBufferPointer(start: state.bytes, count: state.count))
                    state.count -= written
                    if state.count > 0 { memmove(state.bytes, state.bytes + written, state.count) }
                }
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

    /// One write (retried on EINTR); returns the bytes done with: those written, or all of
    /// them on an error (a closed or failing output loses them, as a plain write would).
    private func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        while true {
            let written = Glibc.write(descriptor, bytes.baseAddress, bytes.count)
            if written >= 0 { return written }
            if errno == EINTR { continue }
            return errno == EAGAIN ? 0 : bytes.count
        }
    }

    // MARK: - Formatting

    /// Formats `Background: <seconds>\n` as `"%.2f"` does (glibc rounds the exact binary
    /// value to nearest, ties to even) into `buffer` (64 bytes); returns its length, or nil
    /// (having written nothing) when `seconds` is not finite or not below 2^40.
    static func format(_ seconds: Double, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let hundredths = hundredths(of: seconds.magnitude) else { return nil }
        let prefix: StaticString = "Background: "
        var length = 0
        func put(_ byte: UInt8) {
            buffer[length] = byte
            length += 1
        }
        prefix.withUTF8Buffer { for byte in $0 { put(byte) } }
        if seconds.sign == .minus { put(UInt8(ascii: "-")) }
        var digits = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
                      UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0),
                      UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        withUnsafeMutableBytes(of: &digits) { reversed in
            var value = hundredths
            var count = 0
            repeat {
                reversed[count] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                count += 1
            } while value > 0 || count < 3
            for index in stride(from: count - 1, through: 0, by: -1) {
                put(reversed[index])
                if index == 2 { put(UInt8(ascii: ".")) }
            }
        }
        put(UInt8(ascii: "\n"))
        return length
    }

    /// `magnitude * 100` rounded to nearest, ties to even, computed exactly; nil when
    /// `magnitude` is not finite or not below 2^40.
    static func hundredths(of magnitude: Double) -> UInt64? {
        guard magnitude.isFinite, magnitude < 0x1p40 else { return nil }
        // Below this, magnitude * 100 < 0.1: it rounds to 0 (and the shift below would overflow).
        guard magnitude >= 0x1p-10 else { return 0 }
        // magnitude = significand * 2^exponent exactly, significand < 2^53; times 200 < 2^61.
        let significand = magnitude.significandBitPattern | (1 << 52)
        let shift = 52 - Int(magnitude.exponent)  // 12 ... 62
        let twiceScaled = significand * 200
        let whole = twiceScaled >> UInt64(shift)  // floor(magnitude * 200)
        let remainder = twiceScaled & ((1 << UInt64(shift)) - 1)
        let hundredths = whole >> 1
        guard whole & 1 == 1 else { return hundredths }  // fraction of magnitude * 100 below one half
        if remainder != 0 { return hundredths + 1 }  // above one half
        return hundredths & 1 == 0 ? hundredths : hundredths + 1  // exactly one half: to even
    }

    private static func slowFormat(_ seconds: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 400)
        let length = withVaList([seconds]) { vsnprintf(&buffer, buffer.count, "%.2f", $0) }
        return String(decoding: buffer.prefix(max(0, min(Int(length), buffer.count - 1))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Splits what gpsd sends into lines, each at most ``maximumLength`` bytes: a longer one
/// (a broken or hostile server) is dropped as it streams, up to its newline, so memory stays
/// bounded whatever arrives. gpsd's own reports are at most a few kilobytes (a SKY with
/// every satellite in view).
struct GPSDLineBuffer {
    /// What ``append(_:_:)`` hands on.
    enum Piece {
        case line(ArraySlice<UInt8>)
        /// A line longer than the limit was dropped; its length so far.
        case overlong(Int)
    }

    let maximumLength: Int
    private var pending: [UInt8] = []
    /// Bytes of an overlong line dropped so far; nil while not in one.
    private var skipping: Int?

    init(maximumLength: Int = 16_384) {
        self.maximumLength = maximumLength
    }

    /// Adds bytes read; calls `body` for each line completed (without its newline, a `\r` before
    /// it removed) and for each overlong line once it ends.
    mutating func append(_ bytes: UnsafeRawBufferPointer, _ body: (Piece) -> Void) {
        var start = 0
        while start < bytes.count {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                take(bytes[start...], body)
                return
            }
            take(bytes[start..<newline], body)
            if let skipped = skipping {
                body(.overlong(skipped))
                skipping = nil
            } else {
                var line = pending[...]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                body(.line(line))
            }
            pending.removeAll(keepingCapacity: true)
            start = newline + 1
        }
    }

    /// Forgets a partial line (the connection closed).
    mutating func reset() {
        pending.removeAll()
        skipping = nil
    }

    private mutating func take(_ part: Slice<UnsafeRawBufferPointer>, _ body: (Piece) -> Void) {
        if let skipped = skipping {
            skipping = skipped + part.count
        } else if pending.count + part.count > maximumLength {
            skipping = pending.count + part.count
            pending.removeAll()
        } else {
            pending.append(contentsOf: part)
        }
    }
}

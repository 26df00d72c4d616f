/// Collects received bytes and hands out complete lines, whatever the chunking.
///
/// Linear in the bytes received: each byte is searched for `\n` once, lines are handed out
/// in place (a buffer into the storage, no copy), and the unread rest (less than one line)
/// is moved to the front only when no complete line is left.
struct LineBuffer: Sendable {
    /// Why ``forEachLine(_:)`` returned.
    enum Stop {
        /// The body asked to stop after a line.
        case stopped
        /// No complete line is left.
        case incomplete
        /// A line longer than the limit, complete or not: the connection must be closed.
        case tooLong
    }

    let maxLineLength: Int
    private var bytes: [UInt8] = []
    private var readIndex = 0
    /// Where to continue looking for `\n`; everything between `readIndex` and here has none.
    private var searchIndex = 0

    init(maxLineLength: Int) {
        self.maxLineLength = maxLineLength
    }

    mutating func append(_ data: some Collection<UInt8>) {
        bytes.append(contentsOf: data)
    }

    /// Hands each complete line (without its `\n`) to `body`, as a buffer that is valid
    /// during the call only, until `body` returns false or no complete line is left.
    mutating func forEachLine(_ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Stop {
        let limit = maxLineLength
        var read = readIndex, search = searchIndex
        let stop = bytes.withUnsafeBufferPointer { buffer -> Stop in
            while true {
                guard let newline = Bytes.index(of: Byte.newline, in: buffer, from: search) else {
                    search = buffer.count
                    return buffer.count - read > limit ? .tooLong : .incomplete
                }
                guard newline - read <= limit else { return .tooLong }
                let goOn = body(UnsafeBufferPointer(start: buffer.baseAddress! + read, count: newline - read))
                read = newline + 1
                search = read
                if !goOn { return .stopped }
            }
        }
        readIndex = read
        searchIndex = search
        if stop == .incomplete && readIndex > 0 {
            bytes.removeSubrange(..<readIndex)
            searchIndex -= readIndex
            readIndex = 0
        }
        return stop
    }

    mutating func removeAll() {
        bytes = []
        readIndex = 0
        searchIndex = 0
    }
}

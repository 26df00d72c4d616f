/// Collects received bytes and hands out complete lines, whatever the chunking.
///
/// Linear in the bytes received: each byte is searched for `\n` once, a line is handed
/// out as a slice without copying, and the unread rest (less than one line) is moved to
/// the front only when no complete line is left.
struct LineBuffer: Sendable {
    enum Next {
        /// A complete line, without its `\n`.
        case line(ArraySlice<UInt8>)
        /// A line longer than the limit, complete or not: the connection must be closed.
        case tooLong
        /// No complete line yet.
        case incomplete
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

    mutating func nextLine() -> Next {
        if let newline = Self.firstNewline(in: bytes, from: searchIndex) {
            guard newline - readIndex <= maxLineLength else { return .tooLong }
            let line = bytes[readIndex..<newline]
            readIndex = newline + 1
            searchIndex = readIndex
            return .line(line)
        }
        guard bytes.count - readIndex <= maxLineLength else { return .tooLong }
        if readIndex > 0 {
            bytes.removeSubrange(..<readIndex)
            readIndex = 0
        }
        searchIndex = bytes.count
        return .incomplete
    }

    mutating func removeAll() {
        bytes = []
        readIndex = 0
        searchIndex = 0
    }

    /// The index of the first `\n` at or after `start`: a plain loop over the storage, which
    /// stays fast in debug builds too (the generic `firstIndex(of:)` does not).
    private static func firstNewline(in bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var index = start
            while index < buffer.count {
                if base[index] == Byte.newline { return index }
                index += 1
            }
            return nil
        }
    }
}

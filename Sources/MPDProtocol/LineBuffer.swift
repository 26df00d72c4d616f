/// Collects received bytes and hands out complete lines, whatever the chunking.
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
        if let newline = bytes[searchIndex...].firstIndex(of: Byte.newline) {
            guard newline - readIndex <= maxLineLength else { return .tooLong }
            let line = bytes[readIndex..<newline]
            readIndex = newline + 1
            searchIndex = readIndex
            return .line(line)
        }
        guard bytes.count - readIndex <= maxLineLength else { return .tooLong }
        bytes.removeSubrange(..<readIndex)
        readIndex = 0
        searchIndex = bytes.count
        return .incomplete
    }

    mutating func removeAll() {
        bytes = []
        readIndex = 0
        searchIndex = 0
    }
}

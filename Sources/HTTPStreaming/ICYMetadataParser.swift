
/// Splits a SHOUTcast/Icecast body with interleaved metadata (`icy-metaint`) into its audio
/// bytes and its metadata blocks, and reads a block's `StreamTitle`.
///
/// Every `metaint` audio bytes comes one length byte (×16) and that many bytes of metadata
/// (`StreamTitle='...';StreamUrl='...';`, padded with NULs). A length byte caps a block at
/// 4,080 bytes, so memory is bounded whatever the server sends; a block that is not such
/// text (binary junk, a quote never closed) is an error: the stream is not what it claims.
/// Pure: the transport feeds it each chunk as it arrives.
struct ICYMetadataParser {
    /// The largest `icy-metaint` taken: Icecast sends 16,000; a megabyte is not a sane stream.
    static let largestInterval = 1 << 20

    enum Failure: Error, Equatable {
        case malformed(String)
    }

    private let interval: Int
    /// Audio bytes left before the next length byte.
    private var audioLeft: Int
    /// The metadata block being gathered, and how many bytes of it are still to come.
    private var block: [UInt8] = []
    private var blockLeft = 0
    private var expectingLength = false

    init(interval: Int) {
        self.interval = interval
        audioLeft = interval
    }

    /// Takes the next `bytes` of the body: calls `audio` with each run of audio bytes and
    /// `metadata` with each whole block (its text, NULs trimmed), in order.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, audio: (UnsafeRawBufferPointer) throws -> Void,
                          metadata: ([UInt8]) throws -> Void) throws {
        var index = 0
        while index < bytes.count {
            if blockLeft > 0 {
                let take = min(blockLeft, bytes.count - index)
                block.append(contentsOf: bytes[index..<(index + take)])
                index += take
                blockLeft -= take
                if blockLeft == 0 {
                    let text = Array(block.prefix { $0 != 0 })
                    block.removeAll(keepingCapacity: true)
                    try metadata(text)
                }
                continue
            }
            if expectingLength {
                expectingLength = false
                blockLeft = Int(bytes[index]) * 16
                index += 1
                audioLeft = interval
                continue
            }
            let take = min(audioLeft, bytes.count - index)
            try audio(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
            index += take
            audioLeft -= take
            if audioLeft == 0 { expectingLength = true }
        }
    }

    /// A run of a chunk's audio bytes, or the title of a metadata block (nil: a block without one).
    enum Piece: Equatable {
        case audio(Range<Int>)
        case title(String?)
    }

    /// The pieces of `bytes`, the next bytes of the body, in order. Throws on a malformed block.
    mutating func split(_ bytes: [UInt8]) throws -> [Piece] {
        var pieces: [Piece] = []
        var blocks: [[UInt8]] = []
        try bytes.withUnsafeBytes { raw in
            try consume(raw, audio: { run in
                let start = run.baseAddress! - raw.baseAddress!
                pieces.append(.audio(start..<(start + run.count)))
            }, metadata: { block in
                blocks.append(block)
                pieces.append(.title(nil))
            })
        }
        var blockIndex = 0
        for index in pieces.indices {
            guard case .title = pieces[index] else { continue }
            let block = blocks[blockIndex]
            blockIndex += 1
            if block.isEmpty { continue }
            pieces[index] = .title(try Self.title(in: block))
        }
        // An empty block (most of them: no change) says nothing.
        return pieces.filter { $0 != .title(nil) }
    }

    /// The `StreamTitle` of a block's text (nil if it has none); throws if the block is not
    /// `key='value';` pairs of text.
    static func title(in block: [UInt8]) throws -> String? {
        // Control characters other than tab and line ends do not belong in metadata text.
        if block.contains(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw Failure.malformed("an ICY metadata block with binary bytes in it")
        }
        let text = String(decoding: block, as: UTF8.self)
        var rest = Substring(text)
        var title: String?
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "'" else {
                if rest.allSatisfy({ $0 == " " || $0 == ";" }) { break }
                throw Failure.malformed("an ICY metadata block that is not key='value'; pairs")
            }
            let key = rest[..<equals].trimmingBlanks
            let valueStart = rest.index(equals, offsetBy: 2)
            // The value ends at the first `';` (titles may contain quotes), or at the block's last quote.
            let tail = rest[valueStart...]
            let end: Substring.Index
            if let range = tail.firstRange(of: "';") {
                end = range.lowerBound
                rest = tail[range.upperBound...]
            } else if tail.hasSuffix("'") {
                end = tail.index(before: tail.endIndex)
                rest = ""
            } else {
                throw Failure.malformed("an ICY metadata block whose value is never closed")
            }
            if key == "StreamTitle" { title = String(tail[..<end]) }
        }
        return title
    }
}


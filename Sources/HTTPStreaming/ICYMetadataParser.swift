
/// Splits a SHOUTcast/Icecast body with interleaved metadata (`icy-metaint`) into its audio
/// bytes and its metadata blocks, and reads a block's `StreamTitle`.
///
/// Every `metaint` audio bytes comes one length byte (×16) and that many bytes of metadata
/// (`StreamTitle='...';StreamUrl='...';`, padded with NULs). A length byte caps a block at
/// 4,080 bytes, so memory is bounded whatever the server sends. A block of binary junk is an
/// error: the interval is wrong and the audio would be cut in the wrong places. A block of text
/// that is not well-formed (a NUL in a value, a quote never closed, text after the last `';`) is
/// no reason to stop the audio, as mpd plays on: ``split(_:)`` keeps what came before the fault
/// (a title with a NUL in it is dropped) and says what was wrong. Pure: the transport feeds it
/// each chunk as it arrives.
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
    /// `metadata` with each whole block (its text, the NULs that pad it trimmed), in order.
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
                    let end = block.lastIndex { $0 != 0 }.map { $0 + 1 } ?? 0
                    let text = Array(block[..<end])
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

    /// A run of a chunk's audio bytes, the title of a metadata block (nil: a block without one),
    /// or what was wrong with a block that is text but not well-formed (before its title, if it kept one).
    enum Piece: Equatable {
        case audio(Range<Int>)
        case title(String?)
        case malformed(String)
    }

    /// The pieces of `bytes`, the next bytes of the body, in order. Throws on a block of binary junk.
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
        var result: [Piece] = []
        result.reserveCapacity(pieces.count)
        for piece in pieces {
            guard case .title = piece else {
                result.append(piece)
                continue
            }
            let block = blocks[blockIndex]
            blockIndex += 1
            // An empty block (most of them: no change) says nothing.
            if block.isEmpty { continue }
            let reading = try Self.read(block)
            if let problem = reading.problem { result.append(.malformed(problem)) }
            if let title = reading.title { result.append(.title(title)) }
        }
        return result
    }

    /// The `StreamTitle` of a block's text (nil if it has none); throws if the block is not
    /// `key='value';` pairs of text.
    static func title(in block: [UInt8]) throws -> String? {
        let reading = try read(block)
        if let problem = reading.problem { throw Failure.malformed(problem) }
        return reading.title
    }

    /// A block's `StreamTitle` as far as the block is well-formed, and what is wrong with the
    /// rest (nil: nothing). Throws only for binary bytes: control characters other than NUL, tab
    /// and line ends say the block is not metadata text at all.
    static func read(_ block: [UInt8]) throws -> (title: String?, problem: String?) {
        if block.contains(where: { $0 < 0x20 && $0 != 0 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw Failure.malformed("an ICY metadata block with binary bytes in it")
        }
        let text = String(decoding: block, as: UTF8.self)
        var rest = Substring(text)
        var title: String?
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "'" else {
                if rest.allSatisfy({ $0 == " " || $0 == ";" }) { break }
                return (title, "an ICY metadata block that is not key='value'; pairs")
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
                return (title, "an ICY metadata block whose value is never closed")
            }
            let value = tail[..<end]
            // A NUL ends a C string: no client could be sent the whole title.
            if value.contains("\0") { return (key == "StreamTitle" ? nil : title, "an ICY metadata block with a NUL in a value") }
            if key == "StreamTitle" { title = String(value) }
        }
        return (title, nil)
    }
}


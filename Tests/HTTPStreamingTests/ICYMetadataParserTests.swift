@testable import HTTPStreaming
import Testing

/// ICY metadata as a body carries it: split from the audio at every interval, titles read,
/// and a block that is not metadata text refused.
@Suite struct ICYMetadataParserTests {
    @Test func splitsAudioAndTitlesAcrossChunkBoundaries() throws {
        let title = Array("StreamTitle='Artist - It''s a title';StreamUrl='';".utf8)
        let padded = title + [UInt8](repeating: 0, count: (16 - title.count % 16) % 16)
        var body: [UInt8] = Array(repeating: 1, count: 8) + [UInt8(padded.count / 16)] + padded
        body += Array(repeating: 2, count: 8) + [0] + Array(repeating: 3, count: 5)
        for cut in 1..<body.count {
            var parser = ICYMetadataParser(interval: 8)
            var audio: [UInt8] = []
            var titles: [String?] = []
            for chunk in [Array(body[..<cut]), Array(body[cut...])] {
                for piece in try parser.split(chunk) {
                    switch piece {
                    case .audio(let range): audio += chunk[range]
                    case .title(let title): titles.append(title)
                    case .malformed(let why): Issue.record("cut at \(cut): \(why)")
                    }
                }
            }
            #expect(audio == Array(repeating: 1, count: 8) + Array(repeating: 2, count: 8) + Array(repeating: 3, count: 5), "cut at \(cut)")
            #expect(titles == ["Artist - It''s a title"], "cut at \(cut)")
        }
    }

    @Test func refusesBinaryAndUnclosedBlocks() {
        #expect(throws: ICYMetadataParser.Failure.self) { try ICYMetadataParser.title(in: [0x53, 0x01, 0x02, 0xFF]) }
        #expect(throws: ICYMetadataParser.Failure.self) { try ICYMetadataParser.title(in: Array("StreamTitle='never closed".utf8)) }
        #expect(throws: ICYMetadataParser.Failure.self) { try ICYMetadataParser.title(in: Array("garbage without pairs".utf8)) }
        #expect((try? ICYMetadataParser.title(in: Array("StreamTitle='';".utf8))) == "")
    }

    /// A block of text that is not well-formed costs what is wrong in it, not the stream: the
    /// split goes on, with the fault said and the title kept only if it came whole before it.
    @Test func malformedTextBlocksAreSaidAndSplittingGoesOn() throws {
        let blocks: [(text: String, pieces: [ICYMetadataParser.Piece])] = [
            ("StreamTitle='Bad\0Title';", [.malformed("an ICY metadata block with a NUL in a value")]),
            ("StreamTitle='never closed", [.malformed("an ICY metadata block whose value is never closed")]),
            ("StreamTitle='Kept';trailing text", [.malformed("an ICY metadata block that is not key='value'; pairs"), .title("Kept")]),
            ("StreamTitle='Good';", [.title("Good")]),
        ]
        var parser = ICYMetadataParser(interval: 4)
        for block in blocks {
            let text = Array(block.text.utf8)
            let padded = text + [UInt8](repeating: 0, count: (16 - text.count % 16) % 16)
            let chunk: [UInt8] = [9, 9, 9, 9, UInt8(padded.count / 16)] + padded
            #expect(try parser.split(chunk) == [.audio(0..<4)] + block.pieces, "\(block.text)")
        }
        // Binary junk is still no metadata at all.
        #expect(throws: ICYMetadataParser.Failure.self) { try parser.split([9, 9, 9, 9, 1] + [0x53, 0x01, 0x02] + [UInt8](repeating: 7, count: 13)) }
    }
}

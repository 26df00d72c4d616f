import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// A clip of an item (``PlayerItem/Clip``, MPD's song range) decodes exactly the file's frames
/// from its start to its end, seeks inside itself, and gives the item the clip's duration.
@Suite struct ClippedDecoderTests {
    static let file = TestMedia.directory.appendingPathComponent("02-evening-triangle.mp3")

    private func clip(_ start: Double, _ end: Double?) -> PlayerItem.Clip {
        PlayerItem.Clip(start: MediaTime(seconds: start), end: end.map { MediaTime(seconds: $0) })
    }

    @Test func aClipIsTheFilesFramesFromItsStartToItsEnd() throws {
        let whole = try ID3v2TagTests.decodeAll(try MPG123Decoder(url: Self.file))
        let clipped = try ClippedDecoder(try MPG123Decoder(url: Self.file), clip: clip(1.5, 4.25))
        let bytesPerFrame = clipped.format.bytesPerFrame
        #expect(clipped.format.sampleRate == 44_100)
        #expect(clipped.frameCount == 187_425 - 66_150)
        let decoded = try ID3v2TagTests.decodeAll(clipped)
        #expect(decoded.count == Int(clipped.frameCount) * bytesPerFrame)
        #expect(decoded == Array(whole[66_150 * bytesPerFrame ..< 187_425 * bytesPerFrame]), "sample for sample")
    }

    @Test func seekingStaysInsideTheClip() throws {
        let whole = try ID3v2TagTests.decodeAll(try MPG123Decoder(url: Self.file))
        let clipped = try ClippedDecoder(try MPG123Decoder(url: Self.file), clip: clip(1, 3))
        let bytesPerFrame = clipped.format.bytesPerFrame
        _ = try ID3v2TagTests.decodeAll(clipped)
        try clipped.seek(toFrame: 44_100)
        #expect(try ID3v2TagTests.decodeAll(clipped) == Array(whole[88_200 * bytesPerFrame ..< 132_300 * bytesPerFrame]))
        try clipped.seek(toFrame: 10_000_000)
        #expect(try ID3v2TagTests.decodeAll(clipped).isEmpty, "past the clip's end: nothing")
    }

    @Test func anOpenEndIsTheFilesEndAndAnEndPastItIsToo() throws {
        let base = try MPG123Decoder(url: Self.file)
        let length = base.frameCount
        #expect(try ClippedDecoder(base, clip: clip(10, nil)).frameCount == length - 441_000)
        #expect(try ClippedDecoder(try MPG123Decoder(url: Self.file), clip: clip(10, 999)).frameCount == length - 441_000)
        #expect(try ClippedDecoder(try MPG123Decoder(url: Self.file), clip: clip(999, nil)).frameCount == 0)
    }

    @Test func theItemTakesTheClipsDurationAndTheFilesBitRate() throws {
        let item = PlayerItem(url: Self.file, clip: clip(1, 5))
        let decoder = try item.openDecoder(with: MPG123DecoderFactory())
        item.markReady(decoder)
        #expect(item.duration == MediaTime(value: 176_400, timescale: 44_100))
        #expect(item.bitRate == 128)
        let whole = PlayerItem(url: Self.file)
        let opened = try whole.openDecoder(with: MPG123DecoderFactory())
        #expect(whole.clip == nil && !(opened is ClippedDecoder))
    }
}

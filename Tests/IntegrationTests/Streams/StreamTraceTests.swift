import Foundation
import Testing

/// The Snapcast test's trace, on made-up streams: it must tell snapclient's one-sample
/// adjustments (anywhere, the first block included) from audio the daemon spoiled.
@Suite struct StreamTraceTests {
    /// 40 blocks of 4,096 bytes of varied 16-bit stereo frames (no two frames alike).
    static let expected: Data = {
        var bytes = [UInt8]()
        for frame in 0..<(40 * 1024) {
            let value = UInt32(truncatingIfNeeded: frame &* 2_654_435_761)
            bytes += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
        }
        return Data(bytes)
    }()

    @Test func aSampleDroppedInTheFirstBlockIsAnAdjustment() {
        // One frame dropped 100 frames in; the start is given as where the rest lines up (the
        // Snapcast test locates it by the first piece's middle, after the adjustment).
        let lead = Data(repeating: 0, count: 4_000)
        var capture = lead + Self.expected
        capture.removeSubrange((lead.count + 400)..<(lead.count + 404))
        let trace = StreamTrace(expected: Self.expected, boundaries: [], in: capture, from: lead.count - 4)
        #expect(trace.adjustments == [-1], "adjustments \(trace.adjustments), \(trace.blocksMissing) blocks missing")
    }

    @Test func garbageInsideABlockIsNoAdjustment() {
        let lead = Data(repeating: 0, count: 4_000)
        var capture = lead + Self.expected
        let spoiled = lead.count + 5 * 4_096 + 1_000
        capture.replaceSubrange(spoiled..<(spoiled + 400), with: Data(repeating: 0x55, count: 400))
        let trace = StreamTrace(expected: Self.expected, boundaries: [], in: capture, from: lead.count)
        #expect(trace.adjustments.isEmpty, "garbage counted as snapclient's adjustment: \(trace.adjustments)")
        #expect(trace.blocksMissing == 1)
    }
}

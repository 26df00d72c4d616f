import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where pieces of decoded audio are in a capture, as the gapless benchmark (`bench/gapless.py`)
/// locates them: each by its middle (the frame-aligned place where 4,096 bytes from its
/// middle occur), so that for each boundary `start(next) - (start + length)` is the frames
/// added (+) or dropped (-). The audio here is expected bit for bit, so the match is exact.
public enum PieceLocator {
    /// The byte offset in `capture` where `piece` starts, found by its middle; nil if absent.
    public static func start(of piece: Data, in capture: Data, bytesPerFrame: Int = 4, from: Int = 0) -> Int? {
        let window = 4096
        guard piece.count >= window, capture.count > from else { return nil }
        let middle = (piece.count / 2) / bytesPerFrame * bytesPerFrame
        return piece.withUnsafeBytes { needle in
            capture.withUnsafeBytes { haystack in
                // Frame-aligned places only: a frame's first two bytes, then the whole window.
                let anchor = needle.baseAddress! + middle
                let first = anchor.loadUnaligned(as: UInt32.self)
                var position = from + (bytesPerFrame - from % bytesPerFrame) % bytesPerFrame
                while position + window <= haystack.count {
                    let candidate = haystack.baseAddress! + position
                    if candidate.loadUnaligned(as: UInt32.self) == first, memcmp(candidate, anchor, window) == 0, position >= middle {
                        return position - middle
                    }
                    position += bytesPerFrame
                }
                return nil
            }
        }
    }

    /// Each piece's start (bytes), searched after the previous one, and the frames added (+)
    /// or dropped (-) at each boundary (nil where a piece was not found).
    public static func boundaries(of pieces: [Data], in capture: Data, bytesPerFrame: Int = 4) -> (starts: [Int?], boundaries: [Int?]) {
        var starts: [Int?] = []
        var from = 0
        for piece in pieces {
            let start = self.start(of: piece, in: capture, bytesPerFrame: bytesPerFrame, from: from)
            starts.append(start)
            if let start { from = start }
        }
        let boundaries: [Int?] = (0..<max(0, pieces.count - 1)).map { index in
            guard let start = starts[index], let next = starts[index + 1] else { return nil }
            return (next - (start + pieces[index].count)) / bytesPerFrame
        }
        return (starts, boundaries)
    }
}

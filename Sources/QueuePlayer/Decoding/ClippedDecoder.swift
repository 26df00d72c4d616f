import Synchronization

/// One part of another decoder's item (``PlayerItem/clip``, MPD's song range): frame 0 is the
/// clip's start, ``frameCount`` its length, and decoding ends at its end as at a file's end, so
/// the next item follows gaplessly and the time the player reports is the clip's.
///
/// What `AVMutableComposition.insertTimeRange` makes of one segment of an asset. The base
/// decoder is moved to the start when the clip is opened (off the render thread); on the
/// render thread a decode costs one comparison more than the base's, and no allocation.
final class ClippedDecoder: Decoder {
    let base: any Decoder
    let format: AudioFormat
    let frameCount: Int64
    private let startFrame: Int64
    /// Frames handed out since the start or the last seek; only the render thread decodes and
    /// seeks, an atomic keeps the class `Sendable` without a lock on that path.
    private let position = Atomic<Int64>(0)

    var metadata: ItemMetadata { base.metadata }
    var replayGain: ReplayGainInfo? { base.replayGain }

    /// The part of `base` from `clip.start` to `clip.end` (its end when nil or past it).
    init(_ base: any Decoder, clip: PlayerItem.Clip) throws(DecoderError) {
        self.base = base
        format = base.format
        let rate = Double(base.format.sampleRate)
        let start = min(max(0, Int64((clip.start.seconds * rate).rounded())), base.frameCount)
        let end = clip.end.map { min(max(0, Int64(($0.seconds * rate).rounded())), base.frameCount) } ?? base.frameCount
        startFrame = start
        frameCount = max(0, end - start)
        if start > 0 { try base.seek(toFrame: start) }
    }

    func decode(into buffer: UnsafeMutableRawBufferPointer, maximumFrames: Int) throws(DecoderError) -> Int {
        let done = position.load(ordering: .relaxed)
        let wanted = Int(min(Int64(maximumFrames), frameCount - done))
        guard wanted > 0 else { return 0 }
        let count = try base.decode(into: buffer, maximumFrames: wanted)
        position.store(done + Int64(count), ordering: .relaxed)
        return count
    }

    func seek(toFrame frame: Int64) throws(DecoderError) {
        let target = min(max(0, frame), frameCount)
        try base.seek(toFrame: startFrame + target)
        position.store(target, ordering: .relaxed)
    }
}

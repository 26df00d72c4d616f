/// How far a device has played its stream, in the device's own count, and when it said so.
///
/// The render thread measures the position only when it writes, which is once a period
/// (a sixth of a second by default) or, while the device holds back, once in a few hundred
/// milliseconds; between measurements the player carries the position forward at the
/// sample rate. A device that stalls mid-stream would then be reported playing on for
/// that long. A sink that can answer from other threads (``AudioSink/playedFrames()``)
/// lets the player's clock thread ask the device itself at each tick instead; this value
/// ties such an answer to the render thread's last measurement
/// (``StreamPosition/Snapshot/updated(with:)``).
public struct PlayedFrames: Sendable, Equatable {
    /// The stream the count belongs to: a number the sink changes whenever it starts the
    /// device afresh (opened, flushed, recovered from an underrun, drained). Counts of
    /// different streams cannot be compared.
    public var stream: UInt64
    /// Frames of the sink's output the device has played (given to it, less its delay).
    public var frames: Int64
    /// When the device was asked (the sink's clock, nanoseconds).
    public var measuredAt: UInt64

    public init(stream: UInt64, frames: Int64, measuredAt: UInt64) {
        self.stream = stream
        self.frames = frames
        self.measuredAt = measuredAt
    }
}

/// The shape of the PCM the engine moves: interleaved signed 16-bit native-endian
/// samples at a sample rate with a channel count.
///
/// The sample encoding is fixed so the render path never converts; an item's
/// rate and channel count are kept as decoded, and the sink is reconfigured
/// when they change.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Samples per frame.
    public var channelCount: Int

    public init(sampleRate: Int, channelCount: Int) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// Bytes in one frame (all channels of one sample instant).
    public var bytesPerFrame: Int { channelCount * MemoryLayout<Int16>.size }

    public var description: String {
        "\(sampleRate) Hz, \(channelCount == 1 ? "mono" : channelCount == 2 ? "stereo" : "\(channelCount) channels"), s16"
    }
}

import QueuePlayer

/// `--buffer-time`'s default and range, in milliseconds (the ALSA sink's, which are in microseconds).
public enum BufferTime {
    public static let defaultMilliseconds = Int(ALSAAudioSink.defaultBufferTimeMicroseconds / 1000)
    public static let millisecondRange = Int(ALSAAudioSink.bufferTimeRange.lowerBound / 1000)...Int(ALSAAudioSink.bufferTimeRange.upperBound / 1000)
}

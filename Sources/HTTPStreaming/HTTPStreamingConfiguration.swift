import Logging

/// The limits and patience of network items (``HTTPStreamingDecoderFactory``).
public struct HTTPStreamingConfiguration: Sendable {
    /// How long a stream that keeps failing (a dropped connection, a server that does not
    /// answer, a 5xx) is tried again before its item fails, in seconds (the daemon's
    /// `--stream-retry-time`). Counted from the first failure since audio last arrived.
    public var retryTime: Double
    /// The wait before the first new attempt; doubled per failed attempt up to ``longestRetryDelay``.
    public var firstRetryDelay: Double = 0.5
    public var longestRetryDelay: Double = 30
    /// Seconds for the connection to be made.
    public var connectTimeout: Double = 10
    /// Seconds for the response's head to arrive once asked for.
    public var headTimeout: Double = 15
    /// Seconds without a byte while the buffer has room: a stall, cut and reconnected.
    public var stallTimeout: Double = 5
    /// Fewer bytes than this over ``lowSpeedTime`` seconds while the buffer has room is a
    /// trickle (a server sending a byte a second): cut and reconnected, as a stall.
    public var lowSpeedBytes = 2048
    public var lowSpeedTime: Double = 10
    /// More redirects than this is a loop.
    public var maximumRedirects = 10
    /// The largest resource played (a podcast episode of 24 hours at 320 kbit/s is 3.5 GB): a
    /// larger length, or more bytes, fails the item.
    public var maximumResourceSize: Int64 = 4 << 30
    /// The bytes buffered ahead of the decoder (1 MiB: a minute of 128 kbit/s).
    public var bufferCapacity = 1 << 20
    /// Certificates trusted besides the system's (the daemon's `--ca-file`); nil: the system's only.
    public var trustedCertificates: TrustedCertificates?
    /// Where a stream's warnings go (a malformed ICY metadata block, dropped while the audio plays on).
    public var logger = Logger(label: "queueplayer.http-streaming")

    public init(retryTime: Double = 300) {
        self.retryTime = retryTime
    }
}

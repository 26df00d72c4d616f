/// Where `seekcur` should go.
///
/// mpd decides by the first character of the argument: `+N` and `-N` are relative to the
/// current position, anything else is an absolute time. The daemon clamps the result to the
/// song (mpd seeks to 0 when a backward seek would go before the start).
public enum SeekTarget: Hashable, Sendable {
    /// Seek to this many seconds from the start of the song (never negative).
    case absolute(Double)
    /// Seek this many seconds forward (`seekcur "+5"`).
    case forward(Double)
    /// Seek this many seconds backward (`seekcur "-3"`).
    case backward(Double)

    /// The target in seconds, given the current elapsed time, not yet clamped to the song's length.
    public func seconds(from elapsed: Double) -> Double {
        switch self {
        case .absolute(let seconds): seconds
        case .forward(let seconds): elapsed + seconds
        case .backward(let seconds): Swift.max(0, elapsed - seconds)
        }
    }
}

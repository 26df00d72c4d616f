/// `floor`, `ceil` and `round` of a `Double` without a call into libm, for the arithmetic of a
/// tick: exactly `rounded(.down)`, `rounded(.up)` and `rounded()` (half away from zero).
///
/// Why: Swift builds for the baseline x86-64 here, which has no `roundsd` instruction, so each
/// `rounded` is a call through the PLT into the shared libm. A playing 10 ms observer's tick made
/// three of them on the clock thread, each a cold page of libm's code and of the PLT after 10 ms of
/// other work (a tick's cost on this machine goes with the pages and lines it touches, not its
/// instructions: in a profile of `qp.clock`, libm's `__round`, `__floor_sse41` and
/// `__ceil_sse41` cost about as much as all the tick's arithmetic).
/// The integer conversion (`cvttsd2si`) is an instruction: it truncates toward zero, which is the
/// floor of a non-negative value and the ceiling of a negative one. Values beyond 2^52 in
/// magnitude are integers already (no fraction to round), and NaN and the infinities take libm's
/// way, so every input gives the same bits as the standard library's.
enum TickRounding {
    /// Below this magnitude a `Double` may have a fraction, and its integer part fits an `Int64`.
    private static let limit = 4_503_599_627_370_496.0  // 2^52

    /// `x.rounded(.towardZero)` for `|x| < 2^52`, a zero with the sign of `x` (as IEEE's
    /// rounding gives); nil otherwise (no fraction, or not finite).
    @inline(__always)
    private static func truncated(_ x: Double) -> Double? {
        guard x.magnitude < limit else { return nil }
        let t = Double(Int64(x))
        return t == 0 && x.sign == .minus ? -0.0 : t
    }

    /// `x.rounded(.down)`.
    @inline(__always)
    static func down(_ x: Double) -> Double {
        guard let t = truncated(x) else { return x.rounded(.down) }
        return t > x ? t - 1 : t
    }

    /// `x.rounded(.up)`.
    @inline(__always)
    static func up(_ x: Double) -> Double {
        guard let t = truncated(x) else { return x.rounded(.up) }
        return t < x ? t + 1 : t
    }

    /// `x.rounded()`: to the nearest integer, halves away from zero.
    @inline(__always)
    static func nearest(_ x: Double) -> Double {
        guard let t = truncated(x) else { return x.rounded() }
        // Exact: |x - t| < 1 and t lies within a factor of two of x (or is 0).
        let fraction = x - t
        if fraction >= 0.5 { return t + 1 }
        if fraction <= -0.5 { return t - 1 }
        return t
    }
}

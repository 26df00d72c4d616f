/// `stats`' `playtime` as mpd counts it: the time the player has been playing since the
/// daemon started. mpd adds up the chunks its player thread sends to the outputs, so pauses,
/// stops and waits add nothing, a seek adds nothing of what it jumps over, and a song skipped
/// half-way counts its half; across items, the sum. Here: the player's time in `.playing`,
/// from its `timeControlStatus` changes, on the player's clock (monotonic; a test's virtual
/// clock). A value: the partition keeps it on its queue and feeds it the changes in order.
struct PlayTimeMeter: Sendable, Equatable {
    /// Nanoseconds played before the current stretch.
    private var finished: UInt64 = 0
    /// When the current stretch of playing began (nil: not playing).
    private var playingSince: UInt64?

    /// The player started (`isPlaying`) or stopped playing at `now`; a repeat changes nothing.
    mutating func update(isPlaying: Bool, at now: UInt64) {
        switch (isPlaying, playingSince) {
        case (true, nil):
            playingSince = now
        case (false, let since?):
            finished += now >= since ? now - since : 0
            playingSince = nil
        default:
            break
        }
    }

    /// Seconds played up to `now`.
    func seconds(at now: UInt64) -> Double {
        let current = playingSince.map { now >= $0 ? now - $0 : 0 } ?? 0
        return Double(finished + current) / 1e9
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a state file's bytes are not a usable ``SavedState``.
public struct SavedStateError: Error, Equatable, Sendable {
    /// A clause for the log: "the saved state … was not used, <reason>".
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }
}

extension SavedState {
    /// The longest position a state may hold, in seconds (about 31 years).
    ///
    /// Far beyond any audio file, and well inside what the player's nanosecond
    /// `MediaTime` can represent (about 292 years): restoring a larger position
    /// would overflow it and crash the daemon at every start.
    public static let maximumPosition: Double = 1_000_000_000

    /// Decodes a state file's contents and checks that the daemon can restore it.
    ///
    /// This is everything between reading `state.json` and using it, kept free of
    /// I/O so that it can be tested and fuzzed on arbitrary bytes. A file from a
    /// newer daemon, or one whose `current` or `position` could not be restored,
    /// is refused with a reason rather than partly used: the caller moves it aside,
    /// so nothing is lost and the daemon starts with an empty queue.
    public init(validating data: Data) throws(SavedStateError) {
        let state: SavedState
        do {
            state = try JSONDecoder().decode(SavedState.self, from: data)
        } catch {
            throw SavedStateError(reason: "it cannot be read (\(Self.describe(error)))")
        }
        guard state.version <= SavedState.currentVersion else {
            throw SavedStateError(reason: "it is from a newer queueplayerd (version \(state.version))")
        }
        guard state.version >= 1 else {
            throw SavedStateError(reason: "it has no valid version (\(state.version))")
        }
        if let current = state.current, !state.queue.indices.contains(current) {
            throw SavedStateError(reason: "its current item \(current) is not in its queue of \(state.queue.count)")
        }
        guard state.position.isFinite, state.position >= 0, state.position <= Self.maximumPosition else {
            throw SavedStateError(reason: "its position \(state.position) s is not a time in a file")
        }
        if let modes = state.modes {
            let values = ["0", "1", "oneshot"]
            guard values.contains(modes.single), values.contains(modes.consume), (0...100).contains(modes.volume) else {
                throw SavedStateError(reason: "its modes (single \(modes.single), consume \(modes.consume), volume \(modes.volume)) are not MPD's")
            }
            if let mode = modes.replayGain, !["off", "track", "album", "auto"].contains(mode) {
                throw SavedStateError(reason: "its replay gain mode \(mode) is not MPD's")
            }
        }
        if let ranges = state.ranges {
            guard ranges.count == state.queue.count else {
                throw SavedStateError(reason: "it has \(ranges.count) ranges for a queue of \(state.queue.count)")
            }
            let longest = Int(Self.maximumPosition) * 1000
            for range in ranges {
                guard range.count == 2, (0...longest).contains(range[0]), (0...longest).contains(range[1]),
                      range[1] == 0 || range[1] > range[0] else {
                    throw SavedStateError(reason: "its range \(range) is not a start and an end in milliseconds")
                }
            }
        }
        if let problem = state.pace?.problem { throw SavedStateError(reason: problem) }
        self = state
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "no \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): return context.debugDescription
        default: return "\(error)"
        }
    }
}

import Foundation
import Synchronization

/// One thing to play: an MP3 file, with the status of trying to play it.
///
/// Like `AVPlayerItem`, an item starts `.unknown`, becomes `.readyToPlay` once
/// the player has opened it, or `.failed` with an ``error`` saying which file
/// and why. Items are compared by identity: the same file queued twice is two items.
public final class PlayerItem: KeyValueObservable, Hashable, CustomStringConvertible {
    /// Whether the item can be played.
    public enum Status: Sendable, Hashable {
        /// Not opened yet.
        case unknown
        /// Opened; its format and duration are known.
        case readyToPlay
        /// Cannot be played (or stopped playing); see ``PlayerItem/error``.
        case failed
    }

    /// Posted (object: the item) when an item has played to its end.
    public static let didPlayToEndTimeNotification = Notification.Name("PlayerItemDidPlayToEndTime")
    /// Posted (object: the item) when an item failed to play to its end;
    /// `userInfo[failedToPlayToEndTimeErrorKey]` holds the ``DecoderError``.
    public static let failedToPlayToEndTimeNotification = Notification.Name("PlayerItemFailedToPlayToEndTime")
    /// The `userInfo` key of the error in a failed-to-play-to-end notification.
    public static let failedToPlayToEndTimeErrorKey = "PlayerItemFailedToPlayToEndTimeErrorKey"

    private struct State {
        var status: Status = .unknown
        var error: DecoderError?
        var duration: MediaTime?
        var format: AudioFormat?
        var metadata = ItemMetadata()
        var bitRate: Int?
    }

    private let state = Mutex(State())

    /// The part of a file an item plays (MPD's song range): from `start` to `end` (nil: the
    /// file's end), as a composition of one time range of an asset would.
    public struct Clip: Sendable, Hashable {
        public var start: MediaTime
        public var end: MediaTime?

        public init(start: MediaTime, end: MediaTime?) {
            self.start = start
            self.end = end
        }
    }

    /// The file this item plays.
    public let url: URL
    /// The part of the file it plays; nil: all of it. Its ``duration`` and the player's time
    /// are the clip's (0 at its start).
    public let clip: Clip?
    public let observationRegistry = ObservationRegistry()

    /// Creates an item for the file at `url`; nothing is read until a player needs it.
    public init(url: URL) {
        self.url = url
        clip = nil
    }

    /// Creates an item for the `clip` of the file at `url` (nil: all of it).
    public init(url: URL, clip: Clip?) {
        self.url = url
        self.clip = clip
    }

    /// Opens the item's decoder with `factory`, cut to its clip.
    func openDecoder(with factory: any DecoderFactory) throws(DecoderError) -> any Decoder {
        let decoder = try factory.makeDecoder(for: url)
        guard let clip else { return decoder }
        return try ClippedDecoder(decoder, clip: clip)
    }

    /// Whether the item can be played. Observable.
    public var status: Status { state.withLock { $0.status } }
    /// Why the item failed, naming the file and the cause.
    public var error: DecoderError? { state.withLock { $0.error } }
    /// The exact duration, once the item is ready.
    public var duration: MediaTime? { state.withLock { $0.duration } }
    /// The decoded PCM format, once the item is ready.
    public var format: AudioFormat? { state.withLock { $0.format } }
    /// Tags read from the file, once the item is ready.
    public var metadata: ItemMetadata { state.withLock { $0.metadata } }
    /// The average bit rate in kbit/s, once the item is ready.
    public var bitRate: Int? { state.withLock { $0.bitRate } }

    /// The file name, for logs and displays.
    public var displayName: String { url.lastPathComponent }

    public var description: String { "PlayerItem(\(displayName))" }

    public static func == (lhs: PlayerItem, rhs: PlayerItem) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Updates made by the player

    func markReady(_ decoder: any Decoder) {
        let alreadyReady = state.withLock { $0.status == .readyToPlay }
        state.withLock { state in
            state.duration = MediaTime(value: decoder.frameCount, timescale: Int32(decoder.format.sampleRate))
            state.format = decoder.format
            state.metadata = decoder.metadata
            let file: any Decoder = (decoder as? ClippedDecoder)?.base ?? decoder
            state.bitRate = (file as? MPG123Decoder)?.bitRate
        }
        if !alreadyReady { setStatus(.readyToPlay, error: nil) }
    }

    func markFailed(_ error: DecoderError) {
        setStatus(.failed, error: error)
    }

    private func setStatus(_ status: Status, error: DecoderError?) {
        observationRegistry.change(\PlayerItem.status) {
            state.withLock { state in
                state.status = status
                state.error = error
            }
        }
    }
}

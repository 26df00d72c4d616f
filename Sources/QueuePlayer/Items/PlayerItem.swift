import Foundation
import Synchronization

/// One thing to play: an MP3 file, or an MP3 stream over HTTP(S), with the status of trying to play it.
///
/// Like `AVPlayerItem`, an item starts `.unknown`, becomes `.readyToPlay` once
/// the player has opened it (a stream: once its first frames have arrived), or `.failed`
/// with an ``error`` saying which file and why. Items are compared by identity: the same
/// file queued twice is two items.
///
/// A network item (``isStream``) also says how its buffering goes, with AVPlayerItem's
/// names: ``loadedTimeRanges``, ``isPlaybackLikelyToKeepUp``, ``isPlaybackBufferEmpty``,
/// ``isPlaybackBufferFull``, and a live stream's ``streamName`` and ``streamTitle`` (ICY).
/// Those are observable; their changes are announced on the transport's threads or the
/// player's control queue, whichever saw them.
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
    /// Posted (object: the item) when a network item's buffer ran dry while it played: the
    /// audio stopped, and the player waits (``QueuePlayer/WaitingReason/toMinimizeStalls``).
    public static let playbackStalledNotification = Notification.Name("PlayerItemPlaybackStalled")

    /// What a network item's transport told it, and the buffer flags last announced.
    private struct StreamState {
        var source: (any StreamSource)?
        var name: String?
        var title: String?
        var isLive = false
        var preferredForwardBufferDuration: Double = 0
        var flags = BufferFlags()
    }

    /// The buffer's three flags, as last announced to observers.
    private struct BufferFlags: Equatable {
        var likelyToKeepUp = false
        var empty = true
        var full = false
    }

    private let stream = Mutex(StreamState())

    private struct State {
        var status: Status = .unknown
        var error: DecoderError?
        var duration: MediaTime?
        var format: AudioFormat?
        var metadata = ItemMetadata()
        var replayGain: ReplayGainInfo?
        var bitRate: Int?
    }

    private let state = Mutex(State())
    /// The chapters (``chapters``, `PlayerItem+Chapters.swift`).
    let chapterState = Mutex(ChapterState())

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

    /// Opens the item's decoder with `factory`, cut to its clip; a file's chapters are read
    /// at its first opening (off the render thread, as the opening is).
    func openDecoder(with factory: any DecoderFactory) throws(DecoderError) -> any Decoder {
        let file = try factory.makeDecoder(for: url)
        let decoder: any Decoder = if let clip { try ClippedDecoder(file, clip: clip) } else { file }
        if !decoder.isStreaming { loadChapters(of: decoder) }
        return decoder
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

    /// How the item is played at a rate other than 1 (`AVPlayerItem.audioTimePitchAlgorithm`):
    /// `.timeDomain` (the default) keeps the pitch, `.varispeed` lets it follow the rate. A change
    /// while the item plays is heard from the next chunk decoded (within the output's buffer).
    /// Observable.
    public var audioTimePitchAlgorithm: AudioTimePitchAlgorithm {
        get { AudioTimePitchAlgorithm(rawValue: pitchAlgorithm.load(ordering: .relaxed)) ?? .timeDomain }
        set {
            guard newValue != audioTimePitchAlgorithm else { return }
            observationRegistry.change(\PlayerItem.audioTimePitchAlgorithm) {
                pitchAlgorithm.store(newValue.rawValue, ordering: .relaxed)
            }
        }
    }

    /// ``audioTimePitchAlgorithm``: an atomic, which the render thread reads once per chunk.
    private let pitchAlgorithm = Atomic<UInt8>(AudioTimePitchAlgorithm.timeDomain.rawValue)

    /// Whether quiet stretches of this item are shortened (``QueuePlayer/skipsSilence``, which
    /// this overrides; nil, the default: as the player says). Read by the render thread once per chunk.
    public var skipsSilence: Bool? {
        get { switch skipsSilenceSetting.load(ordering: .relaxed) { case 1: false; case 2: true; default: nil } }
        set { skipsSilenceSetting.store(newValue.map { $0 ? 2 : 1 } ?? 0, ordering: .relaxed) }
    }
    private let skipsSilenceSetting = Atomic<UInt8>(0)

    /// The seconds of silence skip silence has cut from this item so far (decoded: a seek
    /// within the output's buffer after a cut still counts it).
    public var silenceSkipped: Double {
        let rate = format?.sampleRate ?? 0
        return rate > 0 ? Double(silenceSkippedFrames.load(ordering: .relaxed)) / Double(rate) : 0
    }
    private let silenceSkippedFrames = Atomic<Int64>(0)

    /// The render thread cut `frames` frames of silence.
    func addSilenceSkipped(frames: Int) {
        silenceSkippedFrames.add(Int64(frames), ordering: .relaxed)
    }

    /// The file's ReplayGain tags, once it is ready to play (nil: it has none).
    public var replayGain: ReplayGainInfo? { state.withLock { $0.replayGain } }

    /// The item's own gain in dB as the player chose it (``QueuePlayer/gainPolicy``); 0: none.
    public var appliedGain: Double {
        let gain = gainFactor.load(ordering: .relaxed)
        return gain == SoftwareVolume.unity ? 0 : 20 * log10(Double(gain) / Double(SoftwareVolume.unity))
    }

    /// The item's gain in 1/1024 (``SoftwareVolume``), beside the player's volume: an atomic
    /// the control side sets and the render thread reads once per chunk.
    let gainFactor = Atomic<Int32>(SoftwareVolume.unity)

    /// The file name, for logs and displays (a stream's: its URL).
    public var displayName: String { isStream ? url.absoluteString : url.lastPathComponent }

    // MARK: - Network items

    /// True for an `http://` or `https://` item.
    public var isStream: Bool { Self.isNetworkURL(url) }

    /// True for an http or https URL.
    public static func isNetworkURL(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// True for a live stream (no length, or ICY metadata), once its response came. Observable.
    public var isLive: Bool { stream.withLock { $0.isLive } }
    /// A live stream's name (`icy-name`), once its response came. Observable.
    public var streamName: String? { stream.withLock { $0.name } }
    /// The title now heard on a live stream (its ICY `StreamTitle`). Observable: a change is
    /// announced as its audio is decoded, like a new item for a client.
    public var streamTitle: String? { stream.withLock { $0.title } }

    /// Seconds of audio buffered ahead of what is decoded (in the network buffer; the output
    /// holds up to its own buffer more). 0 for a file.
    public var bufferedDuration: Double { stream.withLock { $0.source }?.buffer.bufferedSeconds ?? 0 }

    /// The spans of the item that are loaded: a file's whole duration; a stream's from what is
    /// being decoded to the end of its buffer (empty until known).
    public var loadedTimeRanges: [MediaTimeRange] {
        guard let source = stream.withLock({ $0.source }) else {
            guard let duration else { return [] }
            return [MediaTimeRange(start: .zero, duration: duration)]
        }
        let loaded = source.buffer.loadedSeconds
        guard loaded.duration > 0 else { return [] }
        return [MediaTimeRange(start: MediaTime(seconds: loaded.start), duration: MediaTime(seconds: loaded.duration))]
    }

    /// Whether playback would go on without stalling: a file once ready; a stream once its
    /// buffer holds a couple of seconds (``MPG123StreamDecoder/keepUpSeconds``), all it may, or
    /// the rest of the resource. Observable.
    public var isPlaybackLikelyToKeepUp: Bool {
        guard isStream else { return status == .readyToPlay }
        return currentFlags().likelyToKeepUp
    }

    /// True while a stream's buffer is empty (before the first bytes, during a stall). Observable.
    public var isPlaybackBufferEmpty: Bool {
        guard isStream else { return false }
        return currentFlags().empty
    }

    /// True while a stream's buffer holds all it may (the transport waits for room). Observable.
    public var isPlaybackBufferFull: Bool {
        guard isStream else { return false }
        return currentFlags().full
    }

    /// How much audio a stream buffers ahead, in seconds; 0 (the default) is automatic: as
    /// much as its buffer holds (1 MiB: a minute of 128 kbit/s).
    public var preferredForwardBufferDuration: Double {
        get { stream.withLock { $0.preferredForwardBufferDuration } }
        set {
            let source = stream.withLock { state -> (any StreamSource)? in
                state.preferredForwardBufferDuration = max(0, newValue)
                return state.source
            }
            source?.buffer.setPreferredForwardDuration(max(0, newValue))
        }
    }

    private func currentFlags() -> BufferFlags {
        guard let source = stream.withLock({ $0.source }) else { return BufferFlags() }
        let buffer = source.buffer
        let ended = buffer.hasEnded
        let bytes = buffer.bufferedBytes
        let full = buffer.isFull
        return BufferFlags(likelyToKeepUp: ended || full || buffer.bufferedSeconds >= MPG123StreamDecoder.keepUpSeconds,
                           empty: bytes == 0 && !ended, full: full)
    }

    /// Takes on the source of the decoder the player opened for this item: its description
    /// and buffer from now on (a seek opens another).
    func attach(_ source: any StreamSource) {
        let preferred = stream.withLock { state -> Double in
            state.source = source
            return state.preferredForwardBufferDuration
        }
        source.buffer.setPreferredForwardDuration(preferred)
        source.setObserver { [weak self] event in self?.streamDidChange(event) }
        streamDidChange(.described)
        streamDidChange(.titleChanged)
    }

    /// Announces what the source says changed (and the buffer flags that did).
    func streamDidChange(_ event: StreamEvent) {
        guard let source = stream.withLock({ $0.source }) else { return }
        switch event {
        case .described:
            let name = source.name
            let live = source.buffer.isLive
            if stream.withLock({ $0.name }) != name {
                observationRegistry.change(\PlayerItem.streamName) { stream.withLock { $0.name = name } }
            }
            if stream.withLock({ $0.isLive }) != live {
                observationRegistry.change(\PlayerItem.isLive) { stream.withLock { $0.isLive = live } }
            }
        case .titleChanged:
            let title = source.title
            if stream.withLock({ $0.title }) != title {
                observationRegistry.change(\PlayerItem.streamTitle) { stream.withLock { $0.title = title } }
            }
        case .bufferChanged:
            break
        }
        announceBufferFlags()
    }

    /// Announces each of the three buffer flags that changed since last announced.
    func announceBufferFlags() {
        let now = currentFlags()
        let before = stream.withLock { state -> BufferFlags in
            defer { state.flags = now }
            return state.flags
        }
        guard now != before else { return }
        if now.likelyToKeepUp != before.likelyToKeepUp { observationRegistry.change(\PlayerItem.isPlaybackLikelyToKeepUp) {} }
        if now.empty != before.empty { observationRegistry.change(\PlayerItem.isPlaybackBufferEmpty) {} }
        if now.full != before.full { observationRegistry.change(\PlayerItem.isPlaybackBufferFull) {} }
    }

    public var description: String { "PlayerItem(\(displayName))" }

    public static func == (lhs: PlayerItem, rhs: PlayerItem) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Updates made by the player

    func markReady(_ decoder: any Decoder) {
        let alreadyReady = state.withLock { $0.status == .readyToPlay }
        state.withLock { state in
            state.duration = decoder.knownFrameCount.map { MediaTime(value: $0, timescale: Int32(decoder.format.sampleRate)) }
            state.format = decoder.format
            state.metadata = decoder.metadata
            state.replayGain = decoder.replayGain
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

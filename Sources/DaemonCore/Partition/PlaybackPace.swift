import DaemonState
import Dispatch
import Foundation
import MPDProtocol
import QueuePlayer

/// The daemon's playback rate, pitch algorithm and skip silence (`rate`, `pitchalgorithm`,
/// `skipsilence`; `--rate`, `--pitch-algorithm`, `--skip-silence`).
struct PaceSettings: Equatable, Sendable {
    /// The rate items play at unless their feed has its own, within `QueuePlayer.supportedRates`.
    var rate: Double = 1
    var pitchAlgorithm: AudioTimePitchAlgorithm = .timeDomain
    var skipsSilence = false

    /// The names `pitchalgorithm` and `status` use: `AVAudioTimePitchAlgorithm`'s.
    static func name(of algorithm: AudioTimePitchAlgorithm) -> String {
        switch algorithm {
        case .timeDomain: "timeDomain"
        case .varispeed: "varispeed"
        }
    }

    /// The algorithm `name` names (case folded); nil for another name.
    static func pitchAlgorithm(named name: String) -> AudioTimePitchAlgorithm? {
        AudioTimePitchAlgorithm.allCases.first { self.name(of: $0).lowercased() == name.lowercased() }
    }

    /// `text` as a rate the player plays at; nil for anything else (0, negative, beyond 3, not a number).
    static func rate(_ text: String) -> Double? {
        guard let value = Double(text), isSupported(value) else { return nil }
        return value
    }

    /// Whether the player plays at `rate` (`QueuePlayer.supportedRates`).
    static func isSupported(_ rate: Double) -> Bool {
        rate.isFinite && (Double(QueuePlayer.supportedRates.lowerBound)...Double(QueuePlayer.supportedRates.upperBound)).contains(rate)
    }

    /// The supported range as the refusals and the manual say it: `0.5 to 3.0`.
    static var rangeText: String { "\(QueuePlayer.supportedRates.lowerBound) to \(QueuePlayer.supportedRates.upperBound)" }

    /// A rate as `status` shows it: `1.5`, `2`.
    static func text(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }

    var saved: SavedState.Pace {
        SavedState.Pace(rate: rate, pitchAlgorithm: Self.name(of: pitchAlgorithm), skipsSilence: skipsSilence)
    }

    init(rate: Double = 1, pitchAlgorithm: AudioTimePitchAlgorithm = .timeDomain, skipsSilence: Bool = false) {
        self.rate = rate
        self.pitchAlgorithm = pitchAlgorithm
        self.skipsSilence = skipsSilence
    }

    init(_ saved: SavedState.Pace) {
        self.init(rate: saved.rate, pitchAlgorithm: Self.pitchAlgorithm(named: saved.pitchAlgorithm) ?? .timeDomain,
                  skipsSilence: saved.skipsSilence)
    }
}

/// How the partition's player paces what it plays: the daemon's rate, or the rate of the feed an
/// episode comes from while that episode is heard; the pitch algorithm each item is given; skip
/// silence. The rate is also the player's `defaultRate`, so a pause and a play come back to it.
///
/// Confined to the partition's queue (``QueueBound``); every change is posted as `options`.
final class PlaybackPace: Sendable {
    private struct State {
        var settings = PaceSettings()
        /// The rate heard now: the current item's feed's, else the settings' (or a `rate` given
        /// while the item plays).
        var current: Double = 1
        /// The item ``current`` was chosen for.
        var item: ObjectIdentifier?
        /// A downloaded episode's feed's rate, by the episode's URL; nil for anything else.
        var feedRate: @Sendable (URL) -> Double? = { _ in nil }
    }

    private let state: QueueBound<State>
    private let player: QueuePlayer
    private let events: ControlEvents

    init(player: QueuePlayer, events: ControlEvents, queue: DispatchQueue) {
        self.player = player
        self.events = events
        state = QueueBound(State(), on: queue)
    }

    /// What `rate`, `pitchalgorithm` and `skipsilence` last set (what the state keeps).
    var settings: PaceSettings { state.value.settings }
    /// The rate heard now (`status`'s `rate`).
    var currentRate: Double { state.value.current }

    /// At start: the settings' defaults, or a saved state's, and where feeds' rates come from.
    func configure(_ settings: PaceSettings, feedRate: (@Sendable (URL) -> Double?)? = nil) {
        if let feedRate { state.value.feedRate = feedRate }
        state.value.settings = settings
        player.skipsSilence = settings.skipsSilence
        for item in player.items() { item.audioTimePitchAlgorithm = settings.pitchAlgorithm }
        state.value.item = nil
        follow(player.currentItem, posting: false, always: true)
    }

    /// `rate R`: the daemon's rate, heard at once (also over a feed's, until the next item).
    func setRate(_ rate: Double) {
        state.value.settings.rate = rate
        state.value.current = rate
        apply(rate)
        events.post([.options])
    }

    /// `pitchalgorithm NAME`: for the items held and those to come.
    func setPitchAlgorithm(_ algorithm: AudioTimePitchAlgorithm) {
        state.value.settings.pitchAlgorithm = algorithm
        for item in player.items() { item.audioTimePitchAlgorithm = algorithm }
        events.post([.options])
    }

    /// `skipsilence 0|1`.
    func setSkipsSilence(_ on: Bool) {
        state.value.settings.skipsSilence = on
        player.skipsSilence = on
        events.post([.options])
    }

    /// An item about to be handed to the player gets the pitch algorithm.
    func prepare(_ item: PlayerItem) {
        item.audioTimePitchAlgorithm = state.value.settings.pitchAlgorithm
    }

    /// The item heard is now `item`: its feed's rate, or the daemon's, from now on.
    /// `always`: the player is given the rate even if it is the one heard already (at start).
    func follow(_ item: PlayerItem?, posting: Bool = true, always: Bool = false) {
        let identity = item.map(ObjectIdentifier.init)
        guard identity != state.value.item || always else { return }
        state.value.item = identity
        let wanted = item.flatMap { state.value.feedRate($0.url) } ?? state.value.settings.rate
        guard wanted != state.value.current || always else { return }
        state.value.current = wanted
        apply(wanted)
        if posting { events.post([.options]) }
    }

    /// The player plays at `rate` now if it plays, and from its next `play()` if it does not
    /// (setting `rate` on a paused player would start it).
    private func apply(_ rate: Double) {
        player.defaultRate = Float(rate)
        if player.rate != 0 { player.rate = Float(rate) }
    }
}

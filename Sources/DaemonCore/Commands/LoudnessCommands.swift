import Foundation
import MPDProtocol
import QueuePlayer

/// Even loudness on the control socket: mpd's `replay_gain_mode` and `replay_gain_status`,
/// and (not mpd's) `loudnessscan` and `loudness`.
struct LoudnessCommands: CommandHandler {
    static let kinds: [Command.Kind] = [.replayGainMode, .replayGainStatus, .loudnessscan, .loudness]

    /// The items' gains: the ReplayGain mode clients set.
    let gains: ItemGains
    /// The player, for the current item's gain and file.
    let holding: any PlayerHolding
    let library: MusicLibrary
    /// The measurements; nil in a daemon made without them (some tests).
    let scans: LoudnessScans?
    let application: any ApplicationContext
    let events: ControlEvents

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .replayGainMode(let text):
            guard let mode = ReplayGainMode(rawValue: text) else {
                throw MPDError(.argument, "Unrecognized replay gain mode '\(text)': give \(ReplayGainMode.valueList)",
                               command: Command.Kind.replayGainMode.name)
            }
            guard mode != gains.mode else { return .empty }
            gains.setMode(mode)
            // The state keeps the mode (saved on `options`, as the other modes).
            events.post([.options])
        case .replayGainStatus:
            var reply = Reply()
            reply.append("replay_gain_mode", gains.mode.rawValue)
            return reply
        case .loudnessscan(let uri):
            let scans = try available()
            let file = try self.file(uri, command: Command.Kind.loudnessscan.name)
            let activity = application.beginBackgroundActivity(named: "loudness scan")
            var reply = Reply()
            reply.append("loudnessscan", scans.measure(file, inside: activity))
            return reply
        case .loudness(let uri):
            let scans = try available()
            let file = try self.file(uri, command: Command.Kind.loudness.name)
            var reply = Reply()
            reply.append("file", library.uri(for: file))
            if let measurement = scans.store.measurement(of: file) {
                reply.append("loudness", LoudnessScans.text(measurement.integrated))
                reply.append("truepeak", LoudnessScans.text(measurement.truePeak))
            }
            if uri == nil, let item = holding.player.currentItem {
                reply.append("gain", LoudnessScans.text(item.appliedGain))
            }
            return reply
        default:
            return nil
        }
        return .empty
    }

    private func available() throws(MPDError) -> LoudnessScans {
        guard let scans else { throw MPDError(.unknown, "loudness measurement is off") }
        return scans
    }

    /// The file `uri` names in the library, or the current song's without one.
    private func file(_ uri: String?, command: String) throws(MPDError) -> URL {
        guard let uri else {
            guard let item = holding.player.currentItem else { throw MPDError(.playerSync, "Not playing", command: command) }
            guard !item.isStream else { throw MPDError(.argument, "A stream cannot be measured", command: command) }
            return item.url
        }
        guard let file = library.path(of: uri), file != library.root, MusicLibrary.isRegularFile(file) else {
            throw MPDError(.noExist, "No such song", command: command)
        }
        return file
    }
}

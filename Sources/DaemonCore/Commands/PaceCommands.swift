import MPDProtocol

/// The playback rate, its pitch algorithm and skip silence on the control socket (not mpd's):
/// `rate`, `pitchalgorithm`, `skipsilence`. A bad value is refused and changes nothing.
struct PaceCommands: CommandHandler {
    static let kinds: [Command.Kind] = [.rate, .pitchalgorithm, .skipsilence]

    let pace: PlaybackPace

    func execute(_ command: Command, context: CommandContext) throws(MPDError) -> Reply? {
        switch command {
        case .rate(let text):
            guard let rate = PaceSettings.rate(text) else {
                throw MPDError(.argument, "Expected a rate from \(PaceSettings.rangeText): \(text)")
            }
            pace.setRate(rate)
        case .pitchalgorithm(let name):
            guard let algorithm = PaceSettings.pitchAlgorithm(named: name) else {
                throw MPDError(.argument, "Unrecognized pitch algorithm \"\(name)\", expected timeDomain or varispeed")
            }
            pace.setPitchAlgorithm(algorithm)
        case .skipsilence(let on):
            pace.setSkipsSilence(on)
        default:
            return nil
        }
        return Reply()
    }
}

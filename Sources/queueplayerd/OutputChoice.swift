import ArgumentParser

/// Where the daemon sends audio, as given to `--output`.
enum OutputChoice: Equatable, ExpressibleByArgument, CustomStringConvertible {
    /// ALSA's `default` device if it opens at start, otherwise a real-time null sink.
    ///
    /// Decided once, at start: the null sink is not swapped for ALSA later, even if the device
    /// comes to open (that would change the sink under a playing stream, and a machine without
    /// a sound card, where `auto` falls back, rarely grows one). Once ALSA was chosen, a device
    /// that fails while playing is retried as with ``alsa(device:)``.
    case auto
    /// An ALSA device, strictly: failing to open it at start is an error. A device that fails
    /// later (its sound server restarts, it is unplugged) is retried with a back-off while the
    /// player waits (`status` says so in `error`) and keeps its position.
    case alsa(device: String)
    /// A real-time null sink: audio is paced and discarded.
    case null

    init?(argument: String) {
        switch argument {
        case "auto": self = .auto
        case "null": self = .null
        case "alsa": self = .alsa(device: "default")
        default:
            guard argument.hasPrefix("alsa:"), argument.count > 5 else { return nil }
            self = .alsa(device: String(argument.dropFirst(5)))
        }
    }

    var description: String {
        switch self {
        case .auto: return "auto"
        case .null: return "null"
        case .alsa(let device): return "alsa:\(device)"
        }
    }

    static var allValueStrings: [String] { ["auto", "alsa", "alsa:DEVICE", "null"] }
}

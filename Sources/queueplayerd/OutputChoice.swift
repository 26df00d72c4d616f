import ArgumentParser

/// Where the daemon sends audio, as given to `--output`.
enum OutputChoice: Equatable, ExpressibleByArgument, CustomStringConvertible {
    /// ALSA's `default` device if it opens, otherwise a real-time null sink.
    case auto
    /// An ALSA device, strictly: failing to open it is an error.
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

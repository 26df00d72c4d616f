/// Where the daemon sends audio, as given to `--output` (once per output; given several
/// times, the daemon plays to all of them at once).
public enum OutputChoice: Equatable, Sendable, CustomStringConvertible {
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
    /// A named pipe fed raw PCM in one format at real-time pace (`fifo:PATH?format=44100:16:2`),
    /// for snapserver; every item is decoded to that format.
    case fifo(path: String, format: FIFOFormat)

    /// `RATE:BITS:CHANNELS`, as snapserver's `sampleformat` writes it. Any values parse; the
    /// daemon checks them (``OutputFactory``) so a wrong one gets a clear error.
    public struct FIFOFormat: Equatable, Sendable, CustomStringConvertible {
        public var sampleRate = 44_100
        public var bits = 16
        public var channels = 2

        public init() {}

        init?(_ text: Substring) {
            let fields = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard fields.count == 3, let rate = fields[0], let bits = fields[1], let channels = fields[2] else { return nil }
            (sampleRate, self.bits, self.channels) = (rate, bits, channels)
        }

        public var description: String { "\(sampleRate):\(bits):\(channels)" }
    }

    /// Parses what `--output` (or `output` in the configuration file) says.
    public init?(argument: String) {
        switch argument {
        case "auto": self = .auto
        case "null": self = .null
        case "alsa": self = .alsa(device: "default")
        default:
            if argument.hasPrefix("fifo:") {
                guard let fifo = Self.fifo(String(argument.dropFirst(5))) else { return nil }
                self = fifo
                return
            }
            guard argument.hasPrefix("alsa:"), argument.count > 5 else { return nil }
            self = .alsa(device: String(argument.dropFirst(5)))
        }
    }

    /// `PATH` or `PATH?format=RATE:BITS:CHANNELS`.
    private static func fifo(_ text: String) -> OutputChoice? {
        let parts = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = parts.first, !path.isEmpty else { return nil }
        var format = FIFOFormat()
        if parts.count == 2 {
            guard parts[1].hasPrefix("format="), let parsed = FIFOFormat(parts[1].dropFirst(7)) else { return nil }
            format = parsed
        }
        return .fifo(path: String(path), format: format)
    }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .null: return "null"
        case .alsa(let device): return "alsa:\(device)"
        case .fifo(let path, let format): return "fifo:\(path)?format=\(format)"
        }
    }

    /// Whether a daemon started with `arguments` (the command line after the program's name)
    /// is likely to open an ALSA device at start: no `--output` given (the default is `auto`,
    /// unless the configuration file says otherwise), or one of those given is `auto` or ALSA's;
    /// not for `--help`, `-h` or `--version`, which print and exit. A guess made before the
    /// arguments are parsed, so that alsa-lib's configuration can load meanwhile
    /// (`ALSAConfiguration.loadInBackground()`): a wrong guess costs that load for nothing, or
    /// saves nothing, and changes nothing else.
    public static func commandLineMayOpenALSA(_ arguments: [String]) -> Bool {
        let option = "--" + Settings.schema.output.name
        var given: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            if argument == "--help" || argument == "-h" || argument == "--version" { return false }
            if argument == option {
                if index < arguments.count { given.append(arguments[index]) }
                index += 1
            } else if argument.hasPrefix(option + "=") {
                given.append(String(argument.dropFirst(option.count + 1)))
            }
        }
        return given.isEmpty || given.contains { choice in
            switch OutputChoice(argument: choice) {
            case .auto, .alsa: return true
            case .null, .fifo, nil: return false
            }
        }
    }

    /// The forms `--help` lists.
    public static var allValueStrings: [String] { ["auto", "alsa", "alsa:DEVICE", "null", "fifo:PATH", "fifo:PATH?format=44100:16:2"] }
}

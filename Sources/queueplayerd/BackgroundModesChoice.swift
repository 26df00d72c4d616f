import AppLifecycle
import ArgumentParser
import Foundation

/// `--background-modes`: a comma list of ``BackgroundModeChoice`` (`audio,location`); `none` alone.
struct BackgroundModesChoice: ExpressibleByArgument {
    var modes: Set<BackgroundModeChoice>

    init(modes: Set<BackgroundModeChoice>) {
        self.modes = modes
    }

    init?(argument: String) {
        var modes = Set<BackgroundModeChoice>()
        for name in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let mode = BackgroundModeChoice(rawValue: name.trimmingCharacters(in: .whitespaces)) else { return nil }
            modes.insert(mode)
        }
        guard !modes.isEmpty, !(modes.contains(.none) && modes.count > 1) else { return nil }
        self.modes = modes.subtracting([.none])
    }

    /// The audio mode the application has (the only one it knows): `audio` if listed.
    var mode: Application.BackgroundMode { modes.contains(.audio) ? .audio : .none }

    var defaultValueDescription: String { modes.isEmpty ? "none" : modes.map(\.rawValue).sorted().joined(separator: ",") }

    static var allValueStrings: [String] { ["audio", "location", "audio,location", "none"] }
}

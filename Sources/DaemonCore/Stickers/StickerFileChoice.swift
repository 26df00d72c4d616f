#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--sticker-file PATH|off` (and `sticker-file` in the configuration file): where the sticker
/// database is kept (mpd's `sticker_file`).
public enum StickerFileChoice: Sendable, Equatable {
    /// `sticker.sql` beside the saved state (`$XDG_STATE_HOME/queueplayerd/`), also with
    /// `--no-state`, as the stored playlists are kept there: the default.
    case besideState
    /// No stickers: each sticker command is refused, as mpd refuses them without `sticker_file`.
    case off
    /// This SQLite file (created if missing; its directory must exist).
    case file(String)

    /// `off`, or a path (an empty one is refused by ``DaemonSettings/options(over:)``).
    public init(argument: String) {
        self = argument == "off" ? .off : .file(argument)
    }

    /// The database's file name beside the state, mpd's customary one.
    static let defaultName = "sticker.sql"

    /// The file to open; nil when off. `stateDirectory`: where the state is saved (nil with
    /// `--no-state`: the default state directory, which `environment` gives).
    package func file(stateDirectory: URL?, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        switch self {
        case .off: nil
        case .file(let path): URL(fileURLWithPath: path)
        case .besideState:
            (stateDirectory ?? StateStore.defaultFile(environment: environment).deletingLastPathComponent())
                .appendingPathComponent(Self.defaultName)
        }
    }
}

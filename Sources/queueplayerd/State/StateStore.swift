import DaemonState
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes ``SavedState`` atomically under `$XDG_STATE_HOME/queueplayerd/`.
///
/// A write goes to a temporary file that is fsynced and renamed over the old one,
/// so a crash (or `kill -9`) leaves either the old state or the new, never half
/// of one. A file that cannot be understood is moved aside, never fatal.
struct StateStore: Sendable {
    /// What loading found.
    enum LoadResult: Equatable {
        /// No saved state.
        case none
        /// A usable state.
        case loaded(SavedState)
        /// A corrupt or too new file, moved to the given path.
        case movedAside(reason: String, to: String)
    }

    let file: URL

    /// The default location: `$STATE_DIRECTORY/state.json` under systemd (`StateDirectory=`),
    /// else `$XDG_STATE_HOME/queueplayerd/state.json`, or `~/.local/state/queueplayerd/state.json`.
    static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let directories = environment["STATE_DIRECTORY"], let first = directories.split(separator: ":").first {
            return URL(fileURLWithPath: String(first)).appendingPathComponent("state.json")
        }
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return base.appendingPathComponent("queueplayerd/state.json")
    }

    func load() -> LoadResult {
        guard let data = FileManager.default.contents(atPath: file.path) else { return .none }
        let reason: String
        do throws(SavedStateError) {
            return .loaded(try SavedState(validating: data))
        } catch {
            reason = error.reason
        }
        let aside = file.path + ".unusable-\(Int(Date().timeIntervalSince1970))"
        _ = rename(file.path, aside)
        return .movedAside(reason: reason, to: aside)
    }

    /// Saves `state` atomically: temporary file, fsync, rename, fsync of the directory.
    func save(_ state: SavedState) throws {
        let directory = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(state)
        let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(getpid()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.error("cannot create \(temporary.path)") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0 else {
            unlink(temporary.path)
            throw Self.error("cannot write \(temporary.path)")
        }
        guard rename(temporary.path, file.path) == 0 else {
            unlink(temporary.path)
            throw Self.error("cannot replace \(file.path)")
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func error(_ text: String) -> Error {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(text): \(String(cString: strerror(errno)))"])
    }
}

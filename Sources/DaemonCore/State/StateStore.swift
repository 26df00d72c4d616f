import DaemonState
import FeedFetch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes ``SavedState`` atomically under `$XDG_STATE_HOME/queueplayerd/`.
///
/// A write goes to a temporary file that is fsynced and renamed over the old one,
/// so a crash (or `kill -9`) leaves either the old state or the new, never half
/// of one. A file that cannot be understood is moved aside, never fatal.
package struct StateStore: Sendable {
    /// What loading found.
    enum LoadResult: Equatable {
        /// No saved state.
        case none
        /// A usable state.
        case loaded(SavedState)
        /// A corrupt or too new file, moved to the given path.
        case movedAside(reason: String, to: String)
    }

    package let file: URL

    package init(file: URL) {
        self.file = file
    }

    /// The default location: `$STATE_DIRECTORY/state.json` under systemd (`StateDirectory=`),
    /// else `$XDG_STATE_HOME/queueplayerd/state.json`, or `~/.local/state/queueplayerd/state.json`
    /// (``UserDirectories``: `~` is `$HOME`). The sticker database and the stored playlists are beside it.
    package static func defaultFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let directories = environment["STATE_DIRECTORY"], let first = directories.split(separator: ":").first {
            return URL(fileURLWithPath: String(first)).appendingPathComponent("state.json")
        }
        return UserDirectories.stateHome(environment: environment).appendingPathComponent("queueplayerd/state.json")
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

    /// Why a save failed: the step, its file and the system's error number, read right
    /// where the call failed (not later, when another call may have changed `errno`).
    struct SaveError: Error, CustomStringConvertible, Equatable {
        let step: String
        let path: String
        let code: Int32

        var description: String { "cannot \(step) \(path): \(String(cString: strerror(code)))" }
    }

    /// Saves `state` atomically: temporary file, fsync, rename, fsync of the directory.
    /// Throws a ``SaveError``; the old file is then left as it was.
    func save(_ state: SavedState) throws {
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SaveError(step: "create", path: directory.path, code: Self.posixCode(of: error))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(state)
        let temporary = directory.appendingPathComponent(".\(file.lastPathComponent).\(getpid()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SaveError(step: "create", path: temporary.path, code: errno) }
        var failure: SaveError?
        if let code = Self.writeAll(data, to: fd) {
            failure = SaveError(step: "write", path: temporary.path, code: code)
        } else if fsync(fd) != 0 {
            failure = SaveError(step: "write", path: temporary.path, code: errno)
        }
        // Some file systems report a full disk only when the file is closed.
        if close(fd) != 0, failure == nil {
            failure = SaveError(step: "write", path: temporary.path, code: errno)
        }
        if let failure {
            unlink(temporary.path)
            throw failure
        }
        guard rename(temporary.path, file.path) == 0 else {
            let failure = SaveError(step: "replace", path: file.path, code: errno)
            unlink(temporary.path)
            throw failure
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Writes all of `data`, going on after short writes; the error number if it could not.
    /// A write that takes nothing without an error is a full device (`ENOSPC`): `errno`
    /// then says nothing, and reading it anyway blamed whatever failed last.
    private static func writeAll(_ data: Data, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let count = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if count == 0 { return ENOSPC }
                offset += count
            }
            return nil
        }
    }

    /// The POSIX error number inside a Foundation file error, or `EIO`.
    private static func posixCode(of error: Error) -> Int32 {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        for candidate in [error as NSError, underlying].compactMap({ $0 }) where candidate.domain == NSPOSIXErrorDomain {
            return Int32(candidate.code)
        }
        return EIO
    }
}

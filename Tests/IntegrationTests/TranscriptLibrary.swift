import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The music directory of the issue 34 command transcripts (`Scripts/transcript_library.py`:
/// Media/'s four files and `comments.mp3`, whose TXXX frames `readcomments` reads), made in a
/// scratch directory, and a daemon over it whose database lists its five songs.
struct TranscriptLibrary {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts")

    let root: URL
    let music: URL

    init() throws {
        root = try TestMedia.scratchDirectory()
        music = root.appendingPathComponent("music")
        try TestMedia.run("/usr/bin/python3", [Self.scripts.appendingPathComponent("transcript_library.py").path,
                                               TestMedia.directory.path, music.path])
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }

    /// A daemon over the music directory with `arguments` besides, once `listall` (a `read`
    /// command) lists the five songs.
    func daemon(_ arguments: [String] = []) throws -> ControlDaemon {
        let daemon = try ControlDaemon(["--music-directory", music.path] + arguments)
        do {
            let probe = try daemon.client()
            defer { probe.close() }
            let deadline = ChildProcess.now() + 20
            while try probe.request("listall").filter({ $0.hasPrefix("file: ") }).count < 5 {
                guard ChildProcess.now() < deadline else { throw UnixSocketError("the database did not list the 5 songs within 20 s") }
                var none = pollfd()
                _ = poll(&none, 0, 20)
            }
        } catch {
            daemon.stop()
            throw error
        }
        return daemon
    }
}

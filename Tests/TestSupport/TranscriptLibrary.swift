import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The music directory of the command transcripts (`Scripts/transcript_library.py`:
/// Media/'s four files and `comments.mp3`, whose TXXX frames `readcomments` reads), made in a
/// scratch directory; a daemon over it is ready once its database lists the five songs
/// (``waitUntilListed(_:)``).
public struct TranscriptLibrary {
    public static let scripts = TestMedia.integrationTests.appendingPathComponent("Scripts")
    public static let transcripts = TestMedia.integrationTests.appendingPathComponent("Transcripts")

    public let root: URL
    public let music: URL

    public init() throws {
        root = try TestMedia.scratchDirectory()
        music = root.appendingPathComponent("music")
        try TestMedia.run("/usr/bin/python3", [Self.scripts.appendingPathComponent("transcript_library.py").path,
                                               TestMedia.directory.path, music.path])
    }

    public func remove() {
        try? FileManager.default.removeItem(at: root)
    }

    /// Waits until `listall` (a `read` command) on a client from `connect` lists the five songs;
    /// calls `stop` (the daemon's) before it throws.
    public static func waitUntilListed(_ connect: () throws -> UnixSocketClient, otherwise stop: () -> Void) throws {
        do {
            let probe = try connect()
            defer { probe.close() }
            try waitUntilListed(probe)
        } catch {
            stop()
            throw error
        }
    }

    private static func waitUntilListed(_ client: UnixSocketClient) throws {
        let deadline = ChildProcess.now() + 20
        while try client.request("listall").filter({ $0.hasPrefix("file: ") }).count < 5 {
            guard ChildProcess.now() < deadline else { throw UnixSocketError("the database did not list the 5 songs within 20 s") }
            var none = pollfd()
            _ = poll(&none, 0, 20)
        }
    }
}

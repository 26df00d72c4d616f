import Foundation
import TestSupport

extension TranscriptLibrary {
    /// A daemon over the music directory with `arguments` besides, once `listall` lists the five songs.
    func daemon(_ arguments: [String] = []) throws -> ControlDaemon {
        let daemon = try ControlDaemon(["--music-directory", music.path] + arguments)
        do {
            let probe = try daemon.client()
            defer { probe.close() }
            try Self.waitUntilListed(probe)
        } catch {
            daemon.stop()
            throw error
        }
        return daemon
    }
}

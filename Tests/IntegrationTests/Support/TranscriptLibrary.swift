import Foundation
import TestSupport

extension TranscriptLibrary {
    /// A daemon over the music directory with `arguments` besides, once `listall` lists the five songs.
    func daemon(_ arguments: [String] = []) throws -> ControlDaemon {
        let daemon = try ControlDaemon(["--music-directory", music.path] + arguments)
        try Self.waitUntilListed(daemon.client, otherwise: daemon.stop)
        return daemon
    }
}

import DaemonCore
import Foundation
import TestSupport

extension TranscriptLibrary {
    /// A daemon over the music directory, configured by `configure` besides, once `listall` lists the five songs.
    func daemon(_ configure: (inout DaemonOptions) throws -> Void = { _ in }) throws -> InProcessDaemon {
        let daemon = try InProcessDaemon { options in
            options.musicDirectory = music.path
            try configure(&options)
        }
        try Self.waitUntilListed(daemon.client, otherwise: { daemon.stop() })
        return daemon
    }
}

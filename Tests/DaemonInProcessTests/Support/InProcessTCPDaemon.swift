import DaemonCore
import Foundation
import TestSupport

/// An ``InProcessDaemon`` over `Media/` without saved state, listening on TCP at `bind` too
/// (port 0: the kernel picks one, which the log names); ready once `init` returns.
final class InProcessTCPDaemon: Sendable {
    let control: InProcessDaemon
    let host: String
    let port: Int

    init(bind: String = "127.0.0.1:0", _ configure: (inout DaemonOptions) throws -> Void = { _ in }) throws {
        control = try InProcessDaemon { options in
            options.musicDirectory = TestMedia.directory.path
            options.noState = true
            options.binds.append(try ListenAddress.parse(bind))
            try configure(&options)
        }
        let (host, prefix) = NetworkProbe.shown(bind: bind)
        var found: Int?
        _ = waitUntil(timeout: 10) { [control] in
            found = NetworkProbe.port(in: control.standardError, after: prefix)
            return found != nil
        }
        guard let found else {
            let log = control.standardError
            control.stop()
            throw UnixSocketError("the daemon named no TCP listener within 10 s; log: \(log)")
        }
        self.host = host
        port = found
    }

    func stop() { control.stop() }
}

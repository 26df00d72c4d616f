import DaemonCore
import Foundation
import TestSupport
import Testing

/// An ``InProcessDaemon`` that also serves the web page and the WebSocket API on
/// `127.0.0.1:0` (the kernel picks a free port, which the log names), playing `Media/` without
/// saved state; ready once `init` returns.
final class InProcessWebDaemon: WebServingDaemon, Sendable {
    let daemon: InProcessDaemon
    /// `http://127.0.0.1:PORT`.
    let base: String
    var standardError: String { daemon.standardError }
    var isRunning: Bool { daemon.isRunning }

    /// `configure` is applied after `--media Media/ --no-state --http 127.0.0.1:0`;
    /// `environment` is added to the daemon's.
    init(environment: [String: String] = [:], _ configure: (inout DaemonOptions) throws -> Void = { _ in }) throws {
        daemon = try InProcessDaemon(environment: environment) { options in
            options.media = TestMedia.directory.path
            options.noState = true
            options.http = HTTPListenAddress(host: "127.0.0.1", port: 0)
            try configure(&options)
        }
        guard let found = waitForWebAddress(log: { [daemon] in daemon.standardError }) else {
            let log = daemon.standardError
            daemon.stop()
            throw UnixSocketError("the daemon named no web address within 10 s; log: \(log)")
        }
        base = found
    }

    func stop() { daemon.stop() }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `queueplayerd` with `--http 127.0.0.1:0` (the kernel picks a free port, which the log
/// names) on the real-time null output, playing `Media/`; ready once `init` returns.
final class WebDaemon: WebServingDaemon {
    let control: ControlDaemon
    /// `http://127.0.0.1:PORT`.
    let base: String
    var process: ChildProcess { control.process }

    /// `media`: what it plays (`--media DIR`, or `--music-directory DIR` for downloads);
    /// `environment` is added to the daemon's.
    init(_ extra: [String] = [], http: String = "127.0.0.1:0", media: [String] = ["--media", TestMedia.directory.path],
         environment: [String: String] = [:]) throws {
        control = try ControlDaemon(media + ["--no-state", "--http", http] + extra, environment: environment)
        guard let found = waitForWebAddress(log: { [control] in control.process.standardError }) else {
            let stderr = control.process.standardError
            control.stop()
            throw UnixSocketError("the daemon named no web address within 10 s; stderr: \(stderr)")
        }
        base = found
    }

    func stop() { control.stop() }
}

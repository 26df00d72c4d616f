import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// While stopped, the event loop answers `status` and `currentsong` with the replies the
/// controller rendered last (the daemon's status snapshot), so a client hammering them costs
/// no hop to the controller. Whatever way the state changes, no client may read a reply older
/// than a change it could know of: here a signal (its own command and an idle notification:
/// DaemonInProcessTests' suite of the same name).
@Suite(.serialized) struct ControlSocketStatusSnapshotTests {
    static let song = "01-morning-sine.mp3"

    /// The application's state is in `status` (`appstate`): a signal that moves the daemon to
    /// the background shows in the first `status` after the daemon says it has moved.
    @Test func theBackgroundShowsInTheFirstStatusAfterTheMove() throws {
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state"])
        defer { daemon.stop() }
        let client = try daemon.client()
        for _ in 0..<2 { #expect(replyValue(try client.request("status"), "appstate") == "active") }
        daemon.process.send(SIGUSR1)
        #expect(waitUntil(timeout: 5) { daemon.process.standardError.contains("entered the background") },
                "stderr: \(daemon.process.standardError)")
        let status = try client.request("status")
        #expect(replyValue(status, "appstate") == "background", "\(status)")
        #expect(replyValue(status, "backgroundtimeremaining") != nil, "\(status)")
        daemon.process.send(SIGUSR2)
        #expect(waitUntil(timeout: 5) { replyValue((try? client.request("status")) ?? [], "appstate") == "active" })
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The saved state at start: a corrupt file. (Across restarts, a stop, a crash, a vanished file:
/// IntegrationTests' suite of the same name.)
@Suite(.serialized) struct StateRestoreTests {
    @Test func aCorruptOrFutureStateIsMovedAsideAndTheDaemonStarts() throws {
        for content in ["{\"version\": 1, \"queue\": [", "{\"version\": 99, \"queue\": [], \"position\": 0, \"paused\": true}", "\u{0}\u{1}binary"] {
            let stateHome = try TestMedia.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: stateHome) }
            let directory = stateHome.appendingPathComponent("queueplayerd")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try content.write(to: directory.appendingPathComponent("state.json"), atomically: true, encoding: .utf8)

            let daemon = try InProcessDaemon(environment: ["XDG_STATE_HOME": stateHome.path, "QUEUEPLAYERD_LOG_LEVEL": "debug"]) {
                $0.musicDirectory = TestMedia.directory.path
            }
            defer { daemon.stop() }
            let status = try daemon.status()
            #expect(status["state"] == "stop" && status["playlistlength"] == "0", "it starts as if nothing was saved")
            // The state's own warning: not one about something else (a TCP port taken, say).
            #expect(daemon.waitForStandardError { $0.contains("was not used") && $0.contains("it was moved to") },
                    "\(daemon.standardError)")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            let aside = try #require(names.first { $0.hasPrefix("state.json.unusable-") }, "\(names)")
            #expect(try String(contentsOf: directory.appendingPathComponent(aside), encoding: .utf8) == content, "kept as it was")
        }
    }
}

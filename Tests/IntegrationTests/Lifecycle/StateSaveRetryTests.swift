import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A state directory on a real file system that fills up: the failed save is reported with
/// the system's reason, retried once there is room again, and a crash then loses nothing.
///
/// The file system is a 64 KiB tmpfs mounted for the test, which needs root (or CAP_SYS_ADMIN);
/// where mounting is not allowed the test is not run (StateStoreTests checks the error text on
/// /dev/full without privileges).
@Suite(.serialized, .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root"))
struct StateSaveRetryTests {
    @Test func aSaveThatFailsOnAFullDiskIsRetriedOnceThereIsRoomAndSurvivesAKill() throws {
        let disk = try SmallFileSystem(kilobytes: 64)
        defer { disk.unmount() }
        let stateHome = disk.directory
        let arguments = ["--media", TestMedia.directory.path, "--output", "null"]
        var daemon = try LifecycleDaemon(arguments, stateHome: stateHome)
        try #require(try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" }["state"] == "play")
        // Paused, nothing changes and nothing is saved on a timer: only a retry can write the next change.
        try daemon.request("pause 1")
        try #require(waitUntil(timeout: 5) { (try? ShutdownTests.readState(stateHome))?.paused == true }, "the pause is saved")

        let filler = try disk.fill()
        try daemon.request("delete 3")
        #expect(daemon.waitForStandardError(timeout: 5) { $0.contains("cannot save the state") },
                "the failed save is reported: \(daemon.process.standardError)")
        let report = daemon.process.standardError.split(separator: "\n").first { $0.contains("cannot save the state") } ?? ""
        #expect(report.contains("No space left on device"), "the reason is the full disk: \(report)")
        #expect(!report.contains("No such file or directory"), "\(report)")
        #expect(try ShutdownTests.readState(stateHome).queue.count == 4, "the old state is kept whole")

        try FileManager.default.removeItem(at: filler)
        #expect(waitUntil(timeout: 10) { (try? ShutdownTests.readState(stateHome))?.queue.count == 3 },
                "the change is written once there is room, without another change: \(daemon.process.standardError)")
        #expect(daemon.waitForStandardError { $0.contains("saved the state again") })

        daemon.process.send(SIGKILL)
        #expect(daemon.process.wait(timeout: 5) != nil)
        daemon = try LifecycleDaemon(["--music-directory", TestMedia.directory.path, "--output", "null"], stateHome: stateHome)
        let restored = try daemon.status()
        #expect(restored["playlistlength"] == "3", "nothing the crash could lose: \(restored)")
        #expect(restored["state"] == "pause")
        daemon.process.send(SIGTERM)
        #expect(daemon.process.wait(timeout: 5) == 0)
    }

}

/// A tmpfs of a given size mounted on a scratch directory.
final class SmallFileSystem {
    let directory: URL

    /// True if this process may mount a tmpfs (tried once, on a scratch directory).
    static let canMount: Bool = {
        guard let disk = try? SmallFileSystem(kilobytes: 16) else { return false }
        disk.unmount()
        return true
    }()

    init(kilobytes: Int) throws {
        directory = try TestMedia.scratchDirectory()
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=\(kilobytes)k,mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: directory)
            throw UnixSocketError("cannot mount a tmpfs on \(directory.path): \(reason)")
        }
    }

    /// Writes a file until the file system is full; returns it.
    func fill() throws -> URL {
        let url = directory.appendingPathComponent("filler")
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw UnixSocketError("cannot create \(url.path)") }
        defer { close(fd) }
        let block = [UInt8](repeating: 0xA5, count: 4096)
        while true {
            let count = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < block.count { break }
        }
        // The last partial page too.
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) == 1 {}
        return url
    }

    func unmount() {
        umount2(directory.path, Int32(MNT_DETACH))
        try? FileManager.default.removeItem(at: directory)
    }
}

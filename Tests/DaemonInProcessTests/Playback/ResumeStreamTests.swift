import Foundation
import TestSupport
import Testing

/// A live stream (no length) keeps no place, however long it plays: the daemon in process plays
/// an 11-minute MP3 served without a length and without a Xing header (as a station sends it)
/// by a scripted HTTP server on 127.0.0.1, and `inprogress` stays empty after `stop`.
@Suite(.serialized) struct ResumeStreamTests {
    @Test func aLiveStreamKeepsNothing() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("live.wav")
        let mp3 = directory.appendingPathComponent("live.mp3")
        try TestMedia.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", "-b", "16", wav.path, "trim", "0", "660"])
        // `-t`: no Xing/Info frame, so nothing in the stream tells its length.
        try TestMedia.run("/usr/bin/lame", ["--quiet", "-t", "-b", "8", wav.path, mp3.path])
        let body = try Data(contentsOf: mp3)
        let server = try ScriptedHTTPServer { _, connection in
            guard connection.writeHead("200 OK", [("Content-Type", "audio/mpeg")]) else { return }
            _ = connection.write(body)
            connection.pause(600)
        }
        defer { server.stop() }
        let daemon = try InProcessDaemon()
        defer { daemon.stop() }
        let client = try daemon.client()
        #expect(try client.request("add \(server.url("live").absoluteString)") == ["OK"])
        #expect(try client.request("play") == ["OK"])
        // Past a periodic save (every 5 s heard).
        try daemon.waitForElapsed(atLeast: 6.5, timeout: 20)
        let status = try daemon.status()
        #expect(status["duration"] == nil, "a live stream has no length: \(status)")
        #expect(try client.request("stop") == ["OK"])
        #expect(try client.request("inprogress") == ["OK"])
    }
}

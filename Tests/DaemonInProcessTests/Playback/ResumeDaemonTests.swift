import Foundation
import TestSupport
import Testing

/// Resume on the whole daemon in process: the place kept at a clean exit (the daemon's own
/// shutdown part), and none for a live stream.
@Suite(.serialized) struct ResumeDaemonTests {
    /// A long item left by the daemon's exit 1 s after a seek (before any periodic save) keeps
    /// that place; the next daemon on the same state lists it and plays it from there.
    @Test func theExitKeepsTheLongItemsPlace() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = directory.appendingPathComponent("music")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        _ = try TestMedia.makeSilence(seconds: 660, in: library, name: "long")
        var daemon = try InProcessDaemon(directory: directory) { $0.musicDirectory = library.path }
        let client = try daemon.client()
        for request in ["add long.mp3", "play", "seekcur 100"] { #expect(try client.request(request) == ["OK"], "\(request)") }
        try daemon.waitForElapsed(atLeast: 101)
        let left = Double(try daemon.status()["elapsed"] ?? "0") ?? 0
        #expect(daemon.stop() == true)
        daemon = try InProcessDaemon(directory: directory) { $0.musicDirectory = library.path }
        defer { daemon.stop() }
        let list = try daemon.client().request("inprogress")
        let kept = try #require(list.first { $0.hasPrefix("elapsed: ") }.flatMap { Double($0.dropFirst(9)) }, "\(list)")
        #expect(list.first == "file: long.mp3" && kept >= left && kept < left + 1, "left at \(left) s: \(list)")
    }

    /// A live stream (no length) keeps no place, however long it plays: an 11-minute MP3 served
    /// without a length and without a Xing header (as a station sends it) by a scripted HTTP
    /// server on 127.0.0.1; `inprogress` stays empty after `stop`.
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

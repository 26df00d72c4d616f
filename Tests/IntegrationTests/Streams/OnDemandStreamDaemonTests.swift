import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Files over HTTP through the daemon: nginx on 127.0.0.1 serving MP3s (ranges,
/// a slow location), remote playlists, bad URLs; the daemon as a process.
@Suite(.serialized) struct OnDemandStreamDaemonTests {
    /// One nginx for the suite: `/slow/` at 24 kB/s (a 128 kbit/s item's pace, 16 kB/s, with
    /// little to spare), everything else at loopback speed.
    static let server = SuiteServer { () throws -> NginxServer in
        let server = try NginxServer(locations: NginxServer.slowLocation("slow", bytesPerSecond: 24_000)
                                     + "\nlocation = /loop.mp3 { return 302 /loop.mp3; }")
        for item in TestMedia.all { try server.serve(item.lastPathComponent, Data(contentsOf: item)) }
        try server.serve("slow/" + TestMedia.all[0].lastPathComponent, Data(contentsOf: TestMedia.all[0]))
        try server.serve("page.html", Data("<!DOCTYPE html><html><body>Not here</body></html>\n".utf8))
        // An Ogg Vorbis stream (served as application/octet-stream: only its bytes say what it is).
        let ogg = server.documents.appendingPathComponent("tone.ogg")
        try TestMedia.run("/usr/bin/ffmpeg", ["-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=3",
                                              "-c:a", "libvorbis", ogg.path])
        try server.serve("stations.m3u", Data("#EXTM3U\n#EXTINF:-1,One\n01-morning-sine.mp3\n/etc/passwd\nfile:///etc/passwd\n".utf8))
        try server.serve("stations.pls", Data("[playlist]\nFile1=\(server.url("02-evening-triangle.mp3").absoluteString)\nTitle1=Two\nNumberOfEntries=1\n".utf8))
        return server
    }

    /// An item over HTTP plays sample for sample what the file decodes to, and a file before it
    /// hands over to it with no gap: the FIFO gets exactly the two decoded one after the other.
    @Test(arguments: ["", "slow/"])
    func aFileThenTheSameOverHTTPPlayByteExact(prefix: String) throws {
        try Self.server.use { server in
            let remote = TestMedia.all[0]
            try byteExact(playing: TestMedia.all[1], then: remote, at: prefix + remote.lastPathComponent, on: server)
        }
    }

    /// An https item whose certificate verifies plays as over http: byte-exact (a 3 s tone).
    /// The certificate is trusted through `--ca-file` (nginx serves a self-signed one made for
    /// this test, its own authority; without the option it fails, see
    /// ``aCertificateThatDoesNotVerifyFailsAndTheQueueMovesOn()``).
    @Test func anHTTPSItemWhoseCertificateIsTrustedPlaysByteExact() throws {
        let keys = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: keys) }
        let certificate = try NginxServer.selfSignedCertificate(in: keys)
        let secure = try NginxServer(tls: certificate)
        let tone = try TestMedia.makeTone(seconds: 3, in: keys, name: "tone")
        try secure.serve(tone.lastPathComponent, Data(contentsOf: tone))
        try byteExact(playing: nil, then: tone, at: tone.lastPathComponent, on: secure, arguments: ["--ca-file", certificate.certificate.path])
    }

    /// A `--ca-file` that cannot be used stops the daemon at start-up (exit 64, as every bad
    /// option), naming the file and why: one that does not exist, one that holds no certificate.
    @Test func aCAFileThatCannotBeUsedIsAnErrorAtStartUp() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.pem").path
        let text = directory.appendingPathComponent("notes.pem")
        try Data("not a certificate\n".utf8).write(to: text)
        for path in [missing, text.path] {
            let run = try ToolRun.run(ChildProcess.daemonPath, ["--ca-file", path, "--output", "null", "--no-state",
                                                                 "--socket", directory.appendingPathComponent("control.sock").path], timeout: 10)
            print("--ca-file \(path): \(run.status): \(run.stderr)")
            #expect(run.status == 64, "\(run)")
            #expect(run.stderr.contains("--ca-file \(path): "), "\(run.stderr)")
        }
    }

    /// Plays `local` (if any) then `remote` as served by `server` at `path`, into a FIFO, and
    /// checks the FIFO got exactly what the two decode to, one after the other.
    private func byteExact(playing local: URL?, then remote: URL, at path: String, on server: NginxServer,
                           arguments: [String] = []) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let expected = try (local.map { try ReferenceDecoder.decode($0, rate: 44_100, channels: 2).pcm } ?? Data())
            + ReferenceDecoder.decode(remote, rate: 44_100, channels: 2).pcm
        let fifo = directory.appendingPathComponent("audio.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let capture = directory.appendingPathComponent("capture.raw")
        let reader = try FIFOCapture.reader(fifo, into: capture)
        defer { reader.terminate() }
        let url = server.url(path).absoluteString
        let daemon = try ChildProcess((local.map { [$0.path] } ?? []) + [url, "--once", "--output", "fifo:\(fifo)",
                                       "--socket", directory.appendingPathComponent("control.sock").path] + arguments)
        defer { daemon.terminate() }
        #expect(daemon.wait(timeout: 90) == 0, "\(daemon.standardError.suffix(3000))")
        #expect(reader.wait(timeout: 10) == 0)
        let received = try Data(contentsOf: capture)
        print("\(local == nil ? "" : "file then ")\(url.hasPrefix("https") ? "HTTPS" : "HTTP") \(path): \(received.count) bytes read, \(expected.count) expected")
        #expect(received == expected, "the FIFO's \(received.count) bytes differ from the decoded items' \(expected.count) at byte \(SnapcastTests.firstDifference(received, expected))")
        #expect(!daemon.standardError.contains("cannot play"), "\(daemon.standardError.suffix(2000))")
        #expect(server.requests(for: path).contains { $0.status == 200 || $0.status == 206 })
    }

    /// `listplaylist` and `load` take a remote `.m3u` or `.pls`: its HTTP entries, relative ones
    /// on its server, never a local file; `playlistinfo` shows them by URL.
    @Test func remoteM3UAndPLSListAndLoad() throws {
        try Self.server.use(remoteM3UAndPLSListAndLoad)
    }

    private func remoteM3UAndPLSListAndLoad(_ server: NginxServer) throws {
        let daemon = try StreamDaemon(["--output", "null", "--no-state"])
        let m3u = server.url("stations.m3u").absoluteString
        let pls = server.url("stations.pls").absoluteString
        #expect(try daemon.request("listplaylist \(m3u)") == [
            "file: \(server.url("01-morning-sine.mp3").absoluteString)", "file: \(server.url("etc/passwd").absoluteString)", "OK",
        ])
        try daemon.run("load \(pls)")
        try daemon.run("load \(m3u) 0:1")
        let files = replyPairs(try daemon.request("playlistinfo")).filter { $0.key == "file" }.map(\.value)
        #expect(files == [server.url("02-evening-triangle.mp3").absoluteString, server.url("01-morning-sine.mp3").absoluteString])
        #expect(try daemon.request("load \(server.url("page.html").absoluteString)").first?.hasPrefix("ACK [53@0] {load} ") == true)
        #expect(try daemon.request("load \(server.url("missing.m3u").absoluteString)").first?.contains("404") == true)
        // Playlists in a command list are fetched first too.
        #expect(try daemon.request("command_list_begin\nlistplaylist \(pls)\nstatus\ncommand_list_end").first
                == "file: \(server.url("02-evening-triangle.mp3").absoluteString)")
        daemon.stop()
    }

    /// URLs `add` refuses outright, with the reason.
    @Test func otherSchemesAndCredentialsAreRefused() throws {
        let daemon = try StreamDaemon(["--output", "null", "--no-state"])
        #expect(try daemon.request("add ftp://127.0.0.1/a.mp3") == ["ACK [2@0] {add} Unsupported URI scheme"])
        #expect(try daemon.request("addid \"http://user:pw@127.0.0.1/a.mp3\"") == ["ACK [2@0] {addid} URLs with credentials are refused"])
        #expect(try daemon.request("add file:///etc/passwd") == ["ACK [2@0] {add} Unsupported URI scheme"])
        #expect(try daemon.values("status")["playlistlength"] == "0")
        daemon.stop()
    }

    /// A 404, an HTML page, an Ogg stream and a redirect loop each fail alone, with
    /// `cannot play: URL: why`, and the queue moves on to the song after them.
    @Test func badURLsFailAloneAndTheQueueMovesOn() throws {
        try Self.server.use(badURLsFailAloneAndTheQueueMovesOn)
    }

    private func badURLsFailAloneAndTheQueueMovesOn(_ server: NginxServer) throws {
        let daemon = try StreamDaemon(["--output", "null", "--no-state"])
        let missing = server.url("missing.mp3").absoluteString
        let page = server.url("page.html").absoluteString
        let ogg = server.url("tone.ogg").absoluteString
        let loop = server.url("loop.mp3").absoluteString
        let good = server.url("02-evening-triangle.mp3").absoluteString
        for url in [missing, page, ogg, loop, good] { try daemon.run("add \(url)") }
        try daemon.run("play")
        let status = try daemon.wait(timeout: 30) { $0["song"] == "4" && $0.elapsedSeconds > 0.5 }
        #expect(status["song"] == "4" && status["state"] == "play", "\(status); \(daemon.process.standardError.suffix(2000))")
        let failures = daemon.cannotPlay
        #expect(failures.contains { $0.contains("cannot play: \(missing): ") && $0.contains("404") }, "\(failures)")
        for url in [page, ogg, loop] {
            #expect(failures.contains { $0.contains("cannot play: \(url): ") }, "\(url): \(failures)")
        }
        #expect(failures.count == 4, "\(failures)")
        daemon.stop()
    }

    /// An https station whose certificate does not verify (self-signed, made by `openssl req
    /// -x509` for this test, served by nginx over TLS), and an https URL of a server that speaks
    /// plain HTTP: each `cannot play: URL: why`, the why naming the certificate or the
    /// handshake (BoringSSL's reason, not its source file), and the queue moves on to the song
    /// after them.
    @Test func aCertificateThatDoesNotVerifyFailsAndTheQueueMovesOn() throws {
        try Self.server.use(aCertificateThatDoesNotVerifyFailsAndTheQueueMovesOn)
    }

    private func aCertificateThatDoesNotVerifyFailsAndTheQueueMovesOn(_ server: NginxServer) throws {
        let keys = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: keys) }
        let secure = try NginxServer(tls: try NginxServer.selfSignedCertificate(in: keys))
        let remote = TestMedia.all[0]
        try secure.serve(remote.lastPathComponent, Data(contentsOf: remote))
        let untrusted = secure.url(remote.lastPathComponent).absoluteString
        #expect(untrusted.hasPrefix("https://"))
        let plain = "https://127.0.0.1:\(server.port)/\(remote.lastPathComponent)"
        let good = server.url("02-evening-triangle.mp3").absoluteString
        let daemon = try StreamDaemon(["--output", "null", "--no-state"])
        for url in [untrusted, plain, good] { try daemon.run("add \(url)") }
        try daemon.run("play")
        let status = try daemon.wait(timeout: 30) { $0["song"] == "2" && $0.elapsedSeconds > 0.5 }
        #expect(status["song"] == "2" && status["state"] == "play", "\(status); \(daemon.process.standardError.suffix(2000))")
        let failures = daemon.cannotPlay
        print("TLS failures: \(failures)")
        #expect(failures.count == 2, "\(failures)")
        #expect(failures.contains { $0.hasSuffix("cannot play: \(untrusted): its TLS certificate does not verify (CERTIFICATE_VERIFY_FAILED)") },
                "\(failures)")
        #expect(failures.contains { $0.contains("cannot play: \(plain): the TLS handshake failed (") && !$0.contains(".build") }, "\(failures)")
        // It failed at the handshake: nginx never saw a request.
        #expect(secure.requests.isEmpty, "\(secure.requests)")
        daemon.stop()
    }

    /// A podcast episode still downloading (at 100 kB/s) is added by its enclosure URL and plays
    /// at once; its download goes on beside it and ends with the same bytes as the source.
    @Test func anEpisodeStillDownloadingPlaysFromItsEnclosureURL() throws {
        let source = try BackgroundTransferTests.episode(copies: 8)
        let (nginx, setup) = try BackgroundTransferTests.serving(source)
        defer { setup.remove() }
        let enclosure = nginx.url("media/episode.mp3").absoluteString
        let daemon = try StreamDaemon(["--output", "null", "--feed", nginx.url("feed.xml").absoluteString, "--fetch-interval", "3600"],
                                      music: setup.music)
        let downloading = try daemon.wait(timeout: 15) { $0["transfers"] == "1" }
        try #require(downloading["transfers"] == "1", "the episode's download started: \(downloading)")
        try daemon.run("add \(enclosure)")
        try daemon.run("play")
        let playing = try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 2 }
        #expect(playing["state"] == "play" && playing.elapsedSeconds >= 2, "\(playing)")
        #expect(playing["transfers"] == "1", "played while the download went on: \(playing)")
        #expect(waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: setup.file.path) }, "the download finished")
        #expect(try BackgroundTransferTests.sha256(setup.file) == BackgroundTransferTests.sha256(source))
        #expect(try daemon.values("status")["state"] == "play", "the stream plays on")
        daemon.stop()
        // nginx logs a request when it ends: the stream's, rate-limited, ends with the daemon.
        #expect(waitUntil(timeout: 10) { nginx.requests(for: "media/episode.mp3").count >= 2 },
                "two requests, the download's and the stream's: \(nginx.requests(for: "media/episode.mp3"))")
    }

    /// A stream in the queue is saved with it and comes back after a restart, by URL.
    @Test func aRestartKeepsTheStreamInTheQueue() throws {
        try Self.server.use(aRestartKeepsTheStreamInTheQueue)
    }

    private func aRestartKeepsTheStreamInTheQueue(_ server: NginxServer) throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = server.url("01-morning-sine.mp3").absoluteString
        var daemon = try StreamDaemon(["--output", "null"], directory: directory)
        try daemon.run("add \(url)")
        try daemon.run("play")
        try #require(try daemon.wait(timeout: 15) { $0.elapsedSeconds >= 1 }.elapsedSeconds >= 1)
        daemon.stop()
        daemon = try StreamDaemon(["--output", "null"], directory: directory)
        let restored = try daemon.wait(timeout: 15) { $0["state"] == "play" && $0.elapsedSeconds > 0 }
        #expect(restored["playlistlength"] == "1" && restored["state"] == "play", "\(restored); \(daemon.process.standardError.suffix(2000))")
        #expect(try daemon.values("playlistinfo")["file"] == url)
        daemon.stop()
    }
}

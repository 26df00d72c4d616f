import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Background transfer of new episodes, seen from outside: a real nginx serving the
/// feed and the episode at 100 kB/s, the daemon killed with SIGKILL in mid-download and
/// started again on the same state, nginx's access log showing what it asked for, and the
/// file that ends up in `Podcasts/` compared with the source by SHA-256.
@Suite(.serialized) struct BackgroundTransferTests {
    static let destination = "Podcasts/Loopback Radio/Episode One.mp3"

    /// A feed with one episode, `/media/<file>`.
    static func feed(enclosure file: String) -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0"><channel><title>Loopback Radio</title>
              <item><title>Episode One</title><guid>lr-ep-1</guid><enclosure url="/media/\(file)" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8)
    }

    /// An MP3 of `copies` times the first sample (about 200 kB each): frames after frames,
    /// which libmpg123 opens as any MP3.
    static func episode(copies: Int, tail: Data = Data()) throws -> Data {
        let sample = try Data(contentsOf: TestMedia.all[0])
        return (0..<copies).reduce(into: Data()) { data, _ in data.append(sample) } + tail
    }

    static func sha256(_ file: URL) throws -> String {
        let run = try ToolRun.run("/usr/bin/sha256sum", [file.path], timeout: 30)
        return String(run.stdout.first?.prefix(64) ?? "")
    }

    static func sha256(_ data: Data) throws -> String {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("source")
        try data.write(to: file)
        return try sha256(file)
    }

    static func size(_ file: URL) -> Int64 {
        (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int64) ?? 0
    }

    /// The music directory, the state directory and the daemon's arguments for one feed.
    struct Setup {
        let music: URL
        let state: URL
        let arguments: [String]

        init(feed: URL) throws {
            music = try TestMedia.scratchDirectory()
            state = try TestMedia.scratchDirectory()
            arguments = ["--output", "null", "--music-directory", music.path, "--feed", feed.absoluteString, "--fetch-interval", "3600"]
        }

        var file: URL { music.appendingPathComponent(BackgroundTransferTests.destination) }
        var part: URL { music.appendingPathComponent(BackgroundTransferTests.destination + ".part") }

        func daemon() throws -> LifecycleDaemon { try LifecycleDaemon(arguments, stateHome: state) }

        func remove() {
            try? FileManager.default.removeItem(at: music)
            try? FileManager.default.removeItem(at: state)
        }
    }

    /// nginx (with `locations`) serving the feed and `source` as its episode, and a setup for it.
    static func serving(_ source: Data, locations: String = "location /media/ { limit_rate 100k; }") throws -> (NginxServer, Setup) {
        let nginx = try NginxServer(locations: locations)
        try nginx.serve("feed.xml", Self.feed(enclosure: "episode.mp3"))
        try nginx.serve("media/episode.mp3", source)
        return (nginx, try Setup(feed: nginx.url("feed.xml")))
    }

    /// Starts a daemon, lets it download until the `.part` file has `bytes`, kills it with
    /// SIGKILL, and starts another on the same state; returns it once the file is in place.
    static func downloadAcrossAKill(_ setup: Setup, killAt bytes: Int64,
                                    between: () throws -> Void = {}) throws -> (first: LifecycleDaemon, second: LifecycleDaemon) {
        let first = try setup.daemon()
        try #require(waitUntil(timeout: 60) { size(setup.part) >= bytes }, "the download did not reach \(bytes) bytes: \(first.process.standardError)")
        let status = try first.status()
        #expect(status["transfers"] == "1", "status shows the transfer: \(status)")
        first.process.send(SIGKILL)
        #expect(first.process.wait(timeout: 10) == 128 + SIGKILL)
        #expect(FileManager.default.fileExists(atPath: setup.part.path) && !FileManager.default.fileExists(atPath: setup.file.path))
        try between()
        let second = try setup.daemon()
        #expect(waitUntil(timeout: 90) { FileManager.default.fileExists(atPath: setup.file.path) }, "\(second.process.standardError)")
        return (first, second)
    }

    @Test func aDownloadKilledHalfwayResumesWithRangeAndIfRangeAndEndsIdenticalReportedOnce() throws {
        let source = try Self.episode(copies: 10)
        let (nginx, setup) = try Self.serving(source)
        defer { setup.remove() }

        let (first, second) = try Self.downloadAcrossAKill(setup, killAt: Int64(source.count / 2))
        #expect(second.waitForStandardError(timeout: 10) { $0.contains("transfer finished: \(Self.destination)") })
        #expect(try Self.sha256(setup.file) == Self.sha256(source))
        #expect(!FileManager.default.fileExists(atPath: setup.part.path), "no .part left")
        let names = try FileManager.default.contentsOfDirectory(atPath: setup.file.deletingLastPathComponent().path)
        #expect(names == ["Episode One.mp3"], "\(names)")

        #expect(waitUntil(timeout: 10) { nginx.requests(for: "media/episode.mp3").count == 2 })
        let requests = nginx.requests(for: "media/episode.mp3")
        print("episode requests: \(requests)")
        try #require(requests.count == 2, "\(requests)")
        let resumed = try #require(requests.first { $0.status == 206 }, "\(requests)")
        let start = try #require(resumed.range.wholeMatch(of: #/bytes=(\d+)-/#).flatMap { Int($0.1) }, "\(resumed)")
        #expect(start >= source.count / 2 && start < source.count, "resumed at \(start) of \(source.count)")
        #expect(resumed.ifRange.hasPrefix("\\x22") || resumed.ifRange.hasPrefix("\""), "If-Range carries the first response's ETag: \(resumed)")
        #expect(requests.first { $0.status == 200 }?.range.isEmpty == true, "the first request asked for everything")

        // Reported once, by the daemon that finished it: the library has it and the queue got it.
        let reports = (first.process.standardError + second.process.standardError).components(separatedBy: "transfer finished:").count - 1
        #expect(reports == 1)
        let status = try second.waitForStatus(timeout: 10) { $0["playlistlength"] == "1" && $0["updating_db"] == nil }
        #expect(status["playlistlength"] == "1", "auto-enqueued: \(status)")
        #expect(status["transfers"] == nil, "no transfer runs now")
        let found = try second.request("find file \"\(Self.destination)\"")
        #expect(found["file"] == Self.destination, "in the library: \(found)")
    }

    @Test func aServerThatIgnoresRangeRestartsCleanly() throws {
        let source = try Self.episode(copies: 5)
        let (nginx, setup) = try Self.serving(source, locations: "location /media/ { limit_rate 100k; max_ranges 0; }")
        defer { setup.remove() }

        _ = try Self.downloadAcrossAKill(setup, killAt: Int64(source.count / 2))
        #expect(try Self.sha256(setup.file) == Self.sha256(source))
        #expect(!FileManager.default.fileExists(atPath: setup.part.path))
        #expect(waitUntil(timeout: 10) { nginx.requests(for: "media/episode.mp3").count == 2 })
        let requests = nginx.requests(for: "media/episode.mp3")
        #expect(requests.map(\.status) == [200, 200], "\(requests)")
        #expect(requests.contains { !$0.range.isEmpty }, "the second asked for a range, and got the whole file: \(requests)")
    }

    @Test func aChangedFileIsDownloadedWholeNotSplicedOntoTheOldStart() throws {
        let old = try Self.episode(copies: 5)
        let new = try Self.episode(copies: 6)
        let (nginx, setup) = try Self.serving(old)
        defer { setup.remove() }

        _ = try Self.downloadAcrossAKill(setup, killAt: Int64(old.count / 2)) {
            try nginx.serve("media/episode.mp3", new)   // a new ETag: If-Range no longer matches
        }
        #expect(try Self.sha256(setup.file) == Self.sha256(new))
        #expect(waitUntil(timeout: 10) { nginx.requests(for: "media/episode.mp3").count == 2 })
        let requests = nginx.requests(for: "media/episode.mp3")
        #expect(requests.map(\.status) == [200, 200], "the If-Range did not match: the whole new file: \(requests)")
        #expect(!requests[1].ifRange.isEmpty && !requests[1].range.isEmpty, "\(requests)")
    }

    @Test func aConnectionCutMidBodyIsRetriedWithBackOffAndCompletes() throws {
        let source = try Self.episode(copies: 5)
        let (nginx, setup) = try Self.serving(source)
        defer { setup.remove() }
        let daemon = try setup.daemon()
        try #require(waitUntil(timeout: 60) { Self.size(setup.part) >= Int64(source.count / 3) })
        nginx.stop()   // every connection cut, the body half sent
        #expect(daemon.waitForStandardError(timeout: 30) { $0.contains("trying again in") }, "\(daemon.process.standardError)")
        try nginx.start()
        #expect(waitUntil(timeout: 90) { FileManager.default.fileExists(atPath: setup.file.path) }, "\(daemon.process.standardError)")
        #expect(try Self.sha256(setup.file) == Self.sha256(source))
        #expect(!FileManager.default.fileExists(atPath: setup.part.path))
        let last = try #require(nginx.requests(for: "media/episode.mp3").last)
        #expect(last.status == 206 && !last.range.isEmpty, "resumed where the cut left it: \(nginx.requests)")
        #expect(daemon.process.standardError.components(separatedBy: "transfer finished:").count == 2, "reported once")
    }

    @Test func aHostileTitleStaysInsidePodcastsAndAnEnclosureOverTheCapFailsAndLeavesNoFile() throws {
        let nginx = try NginxServer()
        try nginx.serve("hostile.xml", Data("""
            <?xml version="1.0"?><rss version="2.0"><channel><title>../../..</title>
              <item><title>../../x</title><guid>h-1</guid><enclosure url="/media/small.mp3" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8))
        try nginx.serve("big.xml", Data("""
            <?xml version="1.0"?><rss version="2.0"><channel><title>Big Show</title>
              <item><title>Big</title><guid>b-1</guid><enclosure url="/media/big.mp3" type="audio/mpeg"/></item>
            </channel></rss>
            """.utf8))
        try nginx.serve("media/small.mp3", try Self.episode(copies: 1))
        try nginx.serve("media/big.mp3", try Self.episode(copies: 5))
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try LifecycleDaemon(["--output", "null", "--music-directory", music.path, "--max-download-size", "500000",
                                          "--feed", nginx.url("hostile.xml").absoluteString, "--feed", nginx.url("big.xml").absoluteString])
        #expect(daemon.waitForStandardError(timeout: 30) { $0.contains("transfer finished:") }, "\(daemon.process.standardError)")
        #expect(daemon.waitForStandardError(timeout: 30) { $0.contains("big.mp3 failed: ") && $0.contains("more than the 500000") },
                "\(daemon.process.standardError)")
        let everything = FileManager.default.enumerator(atPath: music.path)?.allObjects as? [String] ?? []
        let files = everything.filter { !$0.hasSuffix("/") && (try? FileManager.default.attributesOfItem(atPath: music.appendingPathComponent($0).path)[.type] as? FileAttributeType) == .typeRegular }
        print("music directory after a hostile title and an oversized enclosure: \(everything)")
        #expect(files.count == 1 && files[0].hasPrefix("Podcasts/") && files[0].hasSuffix(".mp3"), "\(everything)")
        #expect(files.allSatisfy { !$0.split(separator: "/").contains("..") }, "\(files)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: music.path) == ["Podcasts"], "nothing outside Podcasts/")
        #expect(!everything.contains { $0.hasPrefix("Podcasts/Big Show/") && $0.count > "Podcasts/Big Show/".count }, "no file of the refused episode: \(everything)")
        #expect(try daemon.status()["state"] != nil, "the daemon answers on")
    }

    @Test func theDownloadLimitDeletesTheOldestPlayedEpisodeButNeverOneNotHeard() throws {
        let nginx = try NginxServer()
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (number, name) in ["one", "two", "three"].enumerated() {
            let tone = try TestMedia.makeTone(seconds: 0.5, frequency: 440 + 110 * number, in: directory, name: name)
            try nginx.serve("media/\(name).mp3", try Data(contentsOf: tone))
        }
        /// The feed with its newest `count` episodes, newest first.
        func serveFeed(_ count: Int) throws {
            let items = ["One", "Two", "Three"].prefix(count).reversed().map { title in
                "<item><title>\(title)</title><guid>\(title)</guid><enclosure url=\"/media/\(title.lowercased()).mp3\" type=\"audio/mpeg\"/></item>"
            }.joined()
            try nginx.serve("feed.xml", Data("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Limit Show</title>\(items)</channel></rss>".utf8))
        }
        try serveFeed(1)
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try LifecycleDaemon(["--output", "null", "--music-directory", music.path, "--fetch-interval", "never",
                                          "--download-limit", "1", "--feed", nginx.url("feed.xml").absoluteString])
        func file(_ title: String) -> URL { music.appendingPathComponent("Podcasts/Limit Show/\(title).mp3") }
        func push() throws {
            let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", #"{"aps":{"content-available":1}}"#],
                                      environment: ["MPD_HOST": daemon.socket], timeout: 10)
            #expect(run.status == 0, "\(run)")
        }
        try push()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: file("One").path) }, "\(daemon.process.standardError)")
        try #require(try daemon.waitForStatus(timeout: 10) { $0["playlistlength"] == "1" }["playlistlength"] == "1")
        try daemon.request("play")
        #expect(try daemon.waitForStatus(timeout: 10) { $0["state"] == "stop" && $0["song"] == nil }["state"] == "stop",
                "One played to its end")

        // Two arrives: One (played, not playing) is over the limit of one and goes.
        try serveFeed(2)
        try push()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: file("Two").path) })
        #expect(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: file("One").path) }, "\(daemon.process.standardError)")
        // The file goes first, then the line is logged: wait for it too.
        #expect(waitUntil(timeout: 5) {
            daemon.process.standardError.contains("deleted Podcasts/Limit Show/One.mp3: played, and over --download-limit 1")
        }, "\(daemon.process.standardError)")
        // Two is appended, then One removed (in that order, on the controller's queue).
        let queued = { (try? daemon.request("playlistinfo").filter { $0.key == "file" || $0.key == "Pos" }) ?? [:] }
        #expect(waitUntil(timeout: 10) { queued() == ["file": "Podcasts/Limit Show/Two.mp3", "Pos": "0"]
                    && (try? daemon.status()["playlistlength"]) == "1" }, "One left the queue, Two joined it: \(queued())")
        #expect(waitUntil(timeout: 10) {
            guard let found = try? daemon.request("find file \"Podcasts/Limit Show/One.mp3\"") else { return false }
            return found["file"] == nil
        }, "and the library forgets it")

        // Three arrives while Two was never heard: both stay, over the limit or not.
        try serveFeed(3)
        try push()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: file("Three").path) })
        #expect(daemon.waitForStandardError { $0.components(separatedBy: "transfer finished:").count == 4 })
        #expect(FileManager.default.fileExists(atPath: file("Two").path), "not heard: never deleted")
        #expect(daemon.process.standardError.components(separatedBy: "deleted Podcasts/").count == 2, "only One was deleted")
    }

    @Test func aDownloadThatWouldLeaveTooLittleFreeSpaceStopsWithAClearErrorAndWritesNothing() throws {
        let (nginx, setup) = try Self.serving(try Self.episode(copies: 5), locations: "")
        defer { withExtendedLifetime(nginx) { setup.remove() } }
        // More free space kept than any test machine has: the download must not begin.
        let daemon = try LifecycleDaemon(setup.arguments + ["--min-free-space", String(Int64(1) << 60)], stateHome: setup.state)
        #expect(daemon.waitForStandardError(timeout: 20) { $0.contains("are kept free (--min-free-space); trying again in") },
                "\(daemon.process.standardError)")
        #expect(!FileManager.default.fileExists(atPath: setup.part.path) && !FileManager.default.fileExists(atPath: setup.file.path))
        #expect(try daemon.status()["state"] != nil)
    }

    @Test func theTerminalStatusLineShowsTheDownloadsRunning() throws {
        // 1 MB at 100 kB/s: still downloading while a three-second tone plays to its end.
        let (nginx, setup) = try Self.serving(try Self.episode(copies: 5))
        defer { withExtendedLifetime(nginx) { setup.remove() } }
        let tone = try TestMedia.makeTone(seconds: 3, in: setup.music, name: "tone")
        let command = "'\(ChildProcess.daemonPath)' --once --output null --feed '\(nginx.url("feed.xml").absoluteString)' '\(tone.path)'"
        let terminal = try ChildProcess(program: "/usr/bin/script", ["-q", "-e", "-f", "-c", command, "/dev/null"],
                                        environment: ["XDG_RUNTIME_DIR": setup.state.path, "TERM": "xterm"])
        #expect(terminal.wait(timeout: 30) == 0, "stderr: \(terminal.standardError)")
        let raw = (terminal.lines.map(\.text) + [terminal.unterminatedOutput]).joined(separator: "\n")
        #expect(raw.contains("[1/1]  downloads: 1"), "\(raw.suffix(600).debugDescription)")
        #expect(raw.contains("Playing  tone.mp3  "))
    }

    /// Stopped, the status line has no timer: a download that starts is drawn all the same.
    @Test func aStoppedDaemonsStatusLineShowsADownloadThatStarts() throws {
        let (nginx, setup) = try Self.serving(try Self.episode(copies: 5))
        defer { withExtendedLifetime(nginx) { setup.remove() } }
        let arguments = (setup.arguments + ["--no-state"]).map { "'\($0)'" }.joined(separator: " ")
        let terminal = try ChildProcess(program: "/usr/bin/script",
                                        ["-q", "-e", "-f", "-c", "'\(ChildProcess.daemonPath)' \(arguments)", "/dev/null"],
                                        environment: ["XDG_RUNTIME_DIR": setup.state.path, "TERM": "xterm"])
        defer { terminal.terminate() }
        func screen() -> String { (terminal.lines.map(\.text) + [terminal.unterminatedOutput]).joined(separator: "\n") }
        #expect(waitUntil(timeout: 30) { screen().contains("downloads: 1") }, "\(screen().suffix(600).debugDescription)")
        #expect(screen().contains("Stopped"), "\(screen().suffix(600).debugDescription)")
    }

    @Test func twoEpisodesWithOneTitleDownloadingAtOnceGetTwoFiles() throws {
        // Two feeds with the same title, each with an episode of the same title: the same name,
        // downloading side by side (at 100 kB/s, so they overlap).
        let nginx = try NginxServer(locations: "location /media/ { limit_rate 100k; }")
        let a = try Self.episode(copies: 2), b = try Self.episode(copies: 3)
        try nginx.serve("a.xml", Self.feed(enclosure: "a.mp3"))
        try nginx.serve("b.xml", Self.feed(enclosure: "b.mp3"))
        try nginx.serve("media/a.mp3", a)
        try nginx.serve("media/b.mp3", b)
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let daemon = try LifecycleDaemon(["--output", "null", "--music-directory", music.path,
                                          "--feed", nginx.url("a.xml").absoluteString, "--feed", nginx.url("b.xml").absoluteString])
        #expect(daemon.waitForStandardError(timeout: 60) { $0.components(separatedBy: "transfer finished:").count == 3 },
                "\(daemon.process.standardError)")
        let directory = music.appendingPathComponent("Podcasts/Loopback Radio")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["Episode One (2).mp3", "Episode One.mp3"], "\(names)")
        let hashes = Set(try names.map { try Self.sha256(directory.appendingPathComponent($0)) })
        #expect(hashes == Set([try Self.sha256(a), try Self.sha256(b)]), "each file whole, neither spliced into the other")
    }

    @Test func aSuspendedDaemonDownloadsOnAndWakesToHandleTheFinishedFileThenSuspendsAgain() throws {
        let (nginx, setup) = try Self.serving(try Self.episode(copies: 5))
        defer { withExtendedLifetime(nginx) { setup.remove() } }
        let daemon = try LifecycleDaemon(["--output", "null", "--music-directory", setup.music.path, "--background-time", "0",
                                          "--fetch-interval", "never", "--feed", nginx.url("feed.xml").absoluteString],
                                         stateHome: setup.state)
        daemon.process.send(SIGUSR1)
        try #require(try daemon.waitForStatus(timeout: 10) { $0["appstate"] == "suspended" }["appstate"] == "suspended")
        let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", #"{"aps":{"content-available":1}}"#],
                                  environment: ["MPD_HOST": daemon.socket], timeout: 10)
        #expect(run.status == 0, "\(run)")
        // The fetch woke it and is over; the download goes on while it is suspended.
        let downloading = try daemon.waitForStatus(timeout: 20) { $0["appstate"] == "suspended" && $0["transfers"] == "1" }
        #expect(downloading["appstate"] == "suspended" && downloading["transfers"] == "1", "\(downloading)")
        let wakes = daemon.notifications.filter { $0 == "DidWake(background)" }.count
        #expect(daemon.waitForStandardError(timeout: 60) { $0.contains("transfer finished: \(Self.destination)") })
        let handled = try daemon.waitForStatus(timeout: 20) {
            $0["appstate"] == "suspended" && $0["playlistlength"] == "1" && $0["updating_db"] == nil && $0["transfers"] == nil
        }
        #expect(handled["appstate"] == "suspended" && handled["playlistlength"] == "1", "handled, then suspended again: \(handled)")
        let notifications = daemon.notifications
        #expect(notifications.filter { $0 == "DidWake(background)" }.count == wakes + 1, "woken once for the finished file: \(notifications)")
        #expect(notifications.last == "DidSuspend(suspended)")
        #expect(try daemon.request("find file \"\(Self.destination)\"")["file"] == Self.destination)
    }

    @Test func anHTMLPageInsteadOfAudioFailsAndLeavesNoFile() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed(enclosure: "episode.html"))
        try nginx.serve("media/episode.html", Data("<!DOCTYPE html><html><body>Please log in</body></html>".utf8))
        let setup = try Setup(feed: nginx.url("feed.xml"))
        defer { setup.remove() }
        let daemon = try setup.daemon()
        #expect(daemon.waitForStandardError(timeout: 20) { $0.contains("failed: not audio: the server sent text/html") }, "\(daemon.process.standardError)")
        let podcasts = setup.music.appendingPathComponent("Podcasts")
        let left = (FileManager.default.enumerator(atPath: podcasts.path)?.allObjects as? [String] ?? []).filter { $0.contains(".") }
        #expect(left.isEmpty, "no file and no .part: \(left)")
        #expect(try daemon.status()["playlistlength"] == "0")
        #expect(daemon.process.isRunning)
    }
}

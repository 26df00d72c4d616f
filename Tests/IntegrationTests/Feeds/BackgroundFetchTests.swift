import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Background fetch and remote notifications, seen from outside: the daemon as a
/// process, subscribed to feeds on a real nginx on 127.0.0.1, its requests read from
/// nginx's access log, its results from its log, its app state from `status`.
///
/// Every wait is for a condition with a deadline; the deadlines are many times what the
/// step takes on an idle machine. Timing claims are stated as what the daemon must never
/// do (two requests closer than the interval) against nginx's own clock.
@Suite(.serialized) struct BackgroundFetchTests {
    /// nginx's `$msec` has millisecond resolution: two requests the daemon started exactly
    /// the interval apart may be logged up to a millisecond closer.
    static let logResolution = 0.002

    /// Two episodes, as a podcast feed serves them.
    static let feed = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
          <channel>
            <title>Loopback Radio</title>
            <item><title>One</title><guid>lr-1</guid><enclosure url="/media/1.mp3" type="audio/mpeg" length="1000"/></item>
            <item><title>Two</title><guid>lr-2</guid><enclosure url="/media/2.mp3" type="audio/mpeg" length="1000"/></item>
          </channel>
        </rss>
        """.utf8)

    static let push = #"{"aps":{"content-available":1}}"#

    /// A daemon with nothing to play, subscribed to `feeds`, with `arguments` added.
    static func daemon(feeds: [URL], _ arguments: [String]) throws -> LifecycleDaemon {
        try LifecycleDaemon(["--output", "null"] + feeds.flatMap { ["--feed", $0.absoluteString] } + arguments)
    }

    /// The result lines the daemon logged for `feed`, in order (`newData (…)`, `noData`, `failed (…)`).
    static func results(_ daemon: LifecycleDaemon, _ feed: URL) -> [String] {
        let prefix = "feed \(feed.absoluteString): "
        return daemon.process.standardError.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: prefix) else { return nil }
            let result = String(line[range.upperBound...])
            return result.hasPrefix("fetching") || result.hasPrefix("moved") || result.hasPrefix("unsubscribed") ? nil : result
        }
    }

    /// nginx logs a header's `"` as `\x22`.
    static func unescaped(_ text: String) -> String { text.replacingOccurrences(of: "\\x22", with: "\"") }

    /// The gaps between consecutive requests, from the end of one to the end of the next
    /// (both as nginx logged them).
    static func gaps(_ requests: [NginxServer.Request]) -> [Double] {
        zip(requests, requests.dropFirst()).map { $1.time - $0.time }
    }

    @Test func aTwoSecondIntervalGivesA200ThenConditional304sNeverCloserThanTheInterval() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed)
        let url = nginx.url("feed.xml")
        let daemon = try Self.daemon(feeds: [url], ["--fetch-interval", "2"])
        #expect(waitUntil(timeout: 30) { nginx.requests(for: "feed.xml").count >= 4 }, "\(nginx.requests)")
        #expect(daemon.waitForStandardError(timeout: 10) { _ in Self.results(daemon, url).count >= 4 })
        let requests = Array(nginx.requests(for: "feed.xml").prefix(4))
        try #require(requests.count == 4)
        #expect(requests.map(\.status) == [200, 304, 304, 304], "\(requests)")
        #expect(requests[0].ifNoneMatch.isEmpty, "the first request has nothing to match")
        let etag = try #require(requests.dropFirst().first.map { Self.unescaped($0.ifNoneMatch) })
        #expect(etag.hasPrefix("\"") && etag.count > 2, "nginx's ETag, quoted: \(etag)")
        #expect(requests.dropFirst().allSatisfy { Self.unescaped($0.ifNoneMatch) == etag && !$0.ifModifiedSince.isEmpty },
                "every later request carries the validators of the 200: \(requests)")
        let gaps = Self.gaps(requests)
        print("fetch gaps (2 s interval): \(gaps.map { String(format: "%.3f", $0) })")
        #expect(gaps.allSatisfy { $0 >= 2 - Self.logResolution }, "requests closer than the interval: \(gaps)")
        let results = Self.results(daemon, url)
        #expect(results.first == "newData (2 new episodes)", "\(results)")
        #expect(results.dropFirst().prefix(3).allSatisfy { $0 == "noData" }, "\(results)")
    }

    @Test func aPermanentRedirectMovesTheFeedATemporaryOneDoesNotAndAnHTMLPageKeepsTheEpisodes() throws {
        let nginx = try NginxServer(locations: """
            location = /old.xml { return 301 /feed.xml; }
            location = /elsewhere.xml { return 302 /other.xml; }
            """)
        try nginx.serve("feed.xml", Self.feed)
        try nginx.serve("other.xml", Self.feed)
        let moved = nginx.url("old.xml"), redirected = nginx.url("elsewhere.xml")
        let daemon = try Self.daemon(feeds: [moved, redirected], ["--fetch-interval", "2"])
        #expect(waitUntil(timeout: 30) { nginx.requests(for: "feed.xml").count >= 2 && nginx.requests(for: "other.xml").count >= 2 },
                "\(nginx.requests)")
        #expect(nginx.requests(for: "old.xml").count == 1, "after the 301, straight to the new URL: \(nginx.requests)")
        #expect(nginx.requests(for: "elsewhere.xml").count >= 2, "a 302 is asked again each time: \(nginx.requests)")
        #expect(daemon.process.standardError.contains("feed \(moved.absoluteString): moved permanently to \(nginx.url("feed.xml").absoluteString)"))
        #expect(nginx.requests(for: "feed.xml").dropFirst().allSatisfy { $0.status == 304 }, "the validators follow the move")

        // The feed turns into an HTML page (a captive portal, a broken site): the fetch fails,
        // and when the feed is back its episodes are still known, not new again.
        try nginx.serve("feed.xml", Data("<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>".utf8))
        #expect(daemon.waitForStandardError(timeout: 20) { _ in Self.results(daemon, moved).contains { $0.hasPrefix("failed") } })
        #expect(Self.results(daemon, moved).last == "failed (not a feed: the server sent an HTML page)", "\(Self.results(daemon, moved))")
        var changed = Self.feed
        changed.append(Data("<!-- a byte more: a new ETag -->".utf8))
        try nginx.serve("feed.xml", changed)
        let failures = Self.results(daemon, moved).count
        #expect(daemon.waitForStandardError(timeout: 30) { _ in Self.results(daemon, moved).count > failures
                    && !Self.results(daemon, moved).last!.hasPrefix("failed") })
        #expect(Self.results(daemon, moved).last == "noData", "the episodes were kept through the failure: \(Self.results(daemon, moved))")
        #expect(Self.results(daemon, moved).filter { $0.hasPrefix("newData") } == ["newData (2 new episodes)"])
    }

    @Test func aStoppedServerFailsAndAHangingFeedIsCutAtTheFetchTimeout() throws {
        let nginx = try NginxServer(locations: "location = /slow.xml { limit_rate 1; }")
        try nginx.serve("feed.xml", Self.feed)
        // A whole feed at a byte a second: the body would take minutes.
        try nginx.serve("slow.xml", Self.feed)
        let url = nginx.url("feed.xml"), slow = nginx.url("slow.xml")
        let daemon = try Self.daemon(feeds: [url, slow], ["--fetch-interval", "2", "--fetch-timeout", "2"])

        #expect(daemon.waitForStandardError(timeout: 20) { _ in Self.results(daemon, slow).first != nil })
        // nginx logs the request when it finds the connection closed (at its next write, a second on).
        #expect(waitUntil(timeout: 10) { !nginx.requests(for: "slow.xml").isEmpty })
        let cut = try #require(nginx.requests(for: "slow.xml").first, "nginx logs the request once the daemon hangs up")
        #expect(Self.results(daemon, slow).first == "failed (no complete response within 2 s)", "\(Self.results(daemon, slow))")
        // The daemon hung up at its limit: not much before (nginx measures from the request it
        // read, after the daemon's clock started: less a loaded machine's connect time) and
        // nowhere near the minutes the body would take.
        #expect(cut.requestTime >= 1.5 && cut.requestTime < 10, "\(cut)")
        #expect(cut.status == 200)

        #expect(daemon.waitForStandardError(timeout: 20) { _ in Self.results(daemon, url).contains("noData") })
        nginx.stop()
        let before = Self.results(daemon, url).count
        #expect(daemon.waitForStandardError(timeout: 30) { _ in Self.results(daemon, url).count > before })
        let failure = try #require(Self.results(daemon, url).dropFirst(before).first)
        #expect(failure.hasPrefix("failed ("), "\(failure)")
        print("with nginx stopped: \(failure)")
        #expect(try daemon.status()["state"] != nil, "the daemon answers on")
    }

    @Test func hostileFeedsFailWithoutReadingFetchingOrHoldingWhatTheyAskAndTheDaemonPlaysOn() throws {
        let nginx = try NginxServer()
        let secret = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: secret) }
        let marker = "SECRET-\(UUID().uuidString)"
        try marker.write(to: secret.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        func feed(_ doctype: String, title: String) -> Data {
            Data("""
                <?xml version="1.0"?>
                \(doctype)
                <rss version="2.0"><channel><title>\(title)</title>
                <item><title>\(title)</title><guid>g</guid><enclosure url="http://127.0.0.1:1/a.mp3"/></item></channel></rss>
                """.utf8)
        }
        let laughs = (1...9).map { "<!ENTITY l\($0) \"" + String(repeating: "&l\($0 - 1);", count: 10) + "\">" }.joined()
        try nginx.serve("file-entity.xml", feed("<!DOCTYPE rss [<!ENTITY s SYSTEM \"file://\(secret.path)/secret.txt\">]>", title: "&s;"))
        try nginx.serve("url-entity.xml", feed("<!DOCTYPE rss [<!ENTITY s SYSTEM \"\(nginx.url("probe").absoluteString)\">]>", title: "&s;"))
        try nginx.serve("external-dtd.xml", feed("<!DOCTYPE rss SYSTEM \"\(nginx.url("evil.dtd").absoluteString)\">", title: "Plain"))
        try nginx.serve("laughs.xml", feed("<!DOCTYPE rss [<!ENTITY l0 \"ha\">\(laughs)]>", title: "&l9;"))
        // 100 MiB (sparse: it costs the disk nothing).
        let huge = nginx.documents.appendingPathComponent("huge.xml")
        try #require(FileManager.default.createFile(atPath: huge.path, contents: Data("<?xml version=\"1.0\"?><rss>".utf8)))
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 100 << 20)
        try handle.close()
        let names = ["file-entity.xml", "url-entity.xml", "external-dtd.xml", "laughs.xml", "huge.xml"]
        let feeds = names.map { nginx.url($0) }
        // A music directory of its own: the feed that parses would have its episode downloaded there.
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        try FileManager.default.copyItem(at: TestMedia.all[1], to: music.appendingPathComponent(TestMedia.all[1].lastPathComponent))
        let daemon = try LifecycleDaemon(["--media", music.path, "--output", "null", "--no-state", "--fetch-interval", "never"]
                                         + feeds.flatMap { ["--feed", $0.absoluteString] })
        try #require(try daemon.waitForStatus(timeout: 10) { $0["state"] == "play" }["state"] == "play")
        let before = daemon.peakResidentKilobytes ?? 0
        let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", Self.push], environment: ["MPD_HOST": daemon.socket], timeout: 10)
        #expect(run.status == 0, "\(run)")
        #expect(daemon.waitForStandardError(timeout: 30) { _ in feeds.allSatisfy { !Self.results(daemon, $0).isEmpty } },
                "\(daemon.process.standardError)")
        let results = feeds.map { Self.results(daemon, $0).first ?? "" }
        print("hostile feeds: \(results)")
        for (name, result) in zip(names, results) where name != "external-dtd.xml" {
            #expect(result.hasPrefix("failed ("), "\(name): \(result)")
        }
        #expect(results[4] == "failed (the feed is larger than 16777216 bytes)")
        #expect(!daemon.process.standardError.contains(marker), "the secret file's content never shows")
        #expect(nginx.requests(for: "probe").isEmpty && nginx.requests(for: "evil.dtd").isEmpty,
                "no entity or DTD is ever fetched: \(nginx.requests.map(\.path))")
        let peak = daemon.peakResidentKilobytes ?? 0
        print("hostile feeds: peak resident set \(before) kB before the push, \(peak) kB after")
        #expect(peak - before < 64 * 1024, "memory stays bounded: \(before) kB -> \(peak) kB")
        let status = try daemon.status()
        #expect(status["state"] == "play", "the daemon plays on: \(status)")
    }

    @Test func retryAfterFiveSecondsDelaysTheNextRequestAtLeastThatLong() throws {
        let nginx = try NginxServer(locations: "location = /busy.xml { add_header Retry-After 5 always; return 429; }")
        let busy = nginx.url("busy.xml")
        let daemon = try Self.daemon(feeds: [busy], ["--fetch-interval", "2"])
        #expect(waitUntil(timeout: 30) { nginx.requests(for: "busy.xml").count >= 3 }, "\(nginx.requests)")
        let requests = Array(nginx.requests(for: "busy.xml").prefix(3))
        try #require(requests.count == 3)
        #expect(requests.allSatisfy { $0.status == 429 })
        let gaps = Self.gaps(requests)
        print("gaps after 429 Retry-After: 5 (2 s interval): \(gaps.map { String(format: "%.3f", $0) })")
        #expect(gaps.allSatisfy { $0 >= 5 - Self.logResolution }, "\(gaps)")
        #expect(Self.results(daemon, busy).first == "failed (HTTP 429 Too Many Requests, retry after 5 s)", "\(Self.results(daemon, busy))")
    }

    @Test func aSuspendedDaemonStillFetchesAtTheIntervalAndIsSuspendedAgainAfterEachFetch() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed)
        let url = nginx.url("feed.xml")
        let daemon = try Self.daemon(feeds: [url], ["--fetch-interval", "2", "--background-time", "0"])
        #expect(daemon.waitForStandardError(timeout: 10) { _ in Self.results(daemon, url).first == "newData (2 new episodes)" })
        daemon.process.send(SIGUSR1)
        try #require(try daemon.waitForStatus(timeout: 10) { $0["appstate"] == "suspended" }["appstate"] == "suspended")

        // Each fetch while suspended: the daemon wakes (the request reaches nginx), is
        // suspended again after it; `status` itself does not wake it.
        let suspendedAt = nginx.requests(for: "feed.xml").count
        let wakes = daemon.notifications.filter { $0 == "DidWake(background)" }.count
        var seen = suspendedAt
        for round in 1...3 {
            #expect(waitUntil(timeout: 15) { nginx.requests(for: "feed.xml").count > seen }, "fetch \(round) while suspended")
            seen = nginx.requests(for: "feed.xml").count
            let status = try daemon.waitForStatus(timeout: 10) { $0["appstate"] == "suspended" && Self.results(daemon, url).count >= seen }
            #expect(status["appstate"] == "suspended", "suspended again after fetch \(round)")
        }
        let requests = Array(nginx.requests(for: "feed.xml").suffix(from: suspendedAt - 1))
        #expect(requests.dropFirst().allSatisfy { $0.status == 304 }, "\(requests)")
        let gaps = Self.gaps(requests)
        print("fetch gaps while suspended (2 s interval): \(gaps.map { String(format: "%.3f", $0) })")
        #expect(gaps.allSatisfy { $0 >= 2 - Self.logResolution }, "\(gaps)")
        let notifications = daemon.notifications
        #expect(notifications.filter { $0 == "DidWake(background)" }.count - wakes >= 3, "woken for each fetch: \(notifications)")
        #expect(notifications.last == "DidSuspend(suspended)")
        #expect(daemon.process.standardError.contains("woken from suspension"))
    }

    @Test func tenPushesWithinASecondCauseAtMostTwoFetches() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed)
        let url = nginx.url("feed.xml")
        let daemon = try Self.daemon(feeds: [url], ["--fetch-interval", "never"])
        let client = try UnixSocketClient(path: daemon.socket)
        defer { client.close() }
        _ = try client.readLine(timeout: 5)
        let started = ChildProcess.now()
        for _ in 0..<10 {
            #expect(try client.request("sendmessage queueplayerd \"\(Self.push.replacingOccurrences(of: "\"", with: "\\\""))\"") == ["OK"])
        }
        let sending = ChildProcess.now() - started
        try #require(sending < 1, "the ten pushes took \(sending) s to send")
        #expect(nginx.requests(for: "feed.xml").count <= 2)
        // The first push fetches at once; the nine others, all sent during it or within the
        // push spacing after it, make one more fetch.
        #expect(daemon.waitForStandardError(timeout: 20) { _ in Self.results(daemon, url).count >= 2 }, "\(Self.results(daemon, url))")
        #expect(!waitUntil(timeout: 7) { nginx.requests(for: "feed.xml").count > 2 }, "a third fetch: \(nginx.requests)")
        #expect(nginx.requests(for: "feed.xml").count == 2)
        #expect(Self.results(daemon, url) == ["newData (2 new episodes)", "noData"])
    }

    @Test func aPushToASuspendedDaemonFetchesWithinASecondWithMPC() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed)
        let url = nginx.url("feed.xml")
        let daemon = try Self.daemon(feeds: [url], ["--fetch-interval", "never", "--background-time", "0"])
        daemon.process.send(SIGUSR1)
        try #require(try daemon.waitForStatus(timeout: 10) { $0["appstate"] == "suspended" }["appstate"] == "suspended")
        #expect(nginx.requests.isEmpty, "interval never: nothing fetched before the push")

        let sent = ChildProcess.now()
        let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", Self.push], environment: ["MPD_HOST": daemon.socket], timeout: 10)
        #expect(run.status == 0, "\(run)")
        #expect(waitUntil(timeout: 5) { !nginx.requests(for: "feed.xml").isEmpty })
        let fetchedAfter = ChildProcess.now() - sent
        print("push to a suspended daemon: the request was logged \(String(format: "%.3f", fetchedAfter)) s after mpc started")
        #expect(fetchedAfter < 1, "\(fetchedAfter) s")
        let status = try daemon.waitForStatus(timeout: 10) { $0["appstate"] == "suspended" && !Self.results(daemon, url).isEmpty }
        #expect(status["appstate"] == "suspended", "suspended again after the fetch")
        #expect(Self.results(daemon, url) == ["newData (2 new episodes)"])
    }

    @Test func payloadsWithoutContentAvailableOrMalformedChangeNothingAndTheFeedsFileIsReadAgainOnSIGHUP() throws {
        let nginx = try NginxServer()
        try nginx.serve("feed.xml", Self.feed)
        try nginx.serve("other.xml", Self.feed)
        let url = nginx.url("feed.xml"), other = nginx.url("other.xml")
        let config = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: config) }
        let file = config.appendingPathComponent("queueplayerd/feeds")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try "# subscriptions\n\(url.absoluteString)\nnot a url\n".write(to: file, atomically: true, encoding: .utf8)
        let daemon = try LifecycleDaemon(["--output", "null", "--fetch-interval", "never"], environment: ["XDG_CONFIG_HOME": config.path])
        #expect(daemon.waitForStandardError { $0.contains("feeds file \(file.path): line 3: not a URL: not a url (skipped)") },
                "\(daemon.process.standardError)")

        for text in [#"{"aps":{"alert":"hello"}}"#, "not json", #"{"aps":{"content-available":1},"feed":"http://unknown.test/x"}"#] {
            let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", text], environment: ["MPD_HOST": daemon.socket], timeout: 10)
            #expect(run.status == 0, "\(run)")
        }
        #expect(daemon.waitForStandardError { $0.contains("remote notification ignored: no \"content-available\": 1 in \"aps\"") })
        #expect(daemon.waitForStandardError { $0.contains("remote notification not understood (not JSON): nothing changes") })
        #expect(daemon.waitForStandardError { $0.contains("remote notification for http://unknown.test/x, which is not subscribed: ignored") })
        #expect(nginx.requests.isEmpty, "\(nginx.requests)")

        // SIGHUP: the other feed is added; a push naming it fetches it alone.
        try "\(url.absoluteString)\n\(other.absoluteString)\n".write(to: file, atomically: true, encoding: .utf8)
        daemon.process.send(SIGHUP)
        #expect(daemon.waitForStandardError { $0.contains("feeds: 2 subscribed (SIGHUP)") })
        let run = try ToolRun.run("/usr/bin/mpc", ["sendmessage", "queueplayerd", #"{"aps":{"content-available":1},"feed":"\#(other.absoluteString)"}"#],
                                  environment: ["MPD_HOST": daemon.socket], timeout: 10)
        #expect(run.status == 0, "\(run)")
        #expect(waitUntil(timeout: 10) { !nginx.requests(for: "other.xml").isEmpty })
        #expect(daemon.waitForStandardError { _ in Self.results(daemon, other) == ["newData (2 new episodes)"] })
        #expect(nginx.requests(for: "feed.xml").isEmpty)
        #expect(daemon.process.isRunning)
    }
}

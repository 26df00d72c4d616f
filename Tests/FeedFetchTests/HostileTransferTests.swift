import Dispatch
@testable import FeedFetch
import Feeds
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 33: downloads against a hostile server of the tests' own (``ScriptedHTTPServer``)
/// and crowds of episodes: naming stays linear, a `206` that ignores `If-Range` is not
/// spliced, a trickle gives its slot up, the journal costs the same per change whatever the
/// number of jobs, a redirect loop fails at once, credentials stay out of the log.
@Suite(.serialized) struct HostileTransferTests {
    static let v1 = try! Data(contentsOf: TestMedia.all[0])
    static let v2 = try! Data(contentsOf: TestMedia.all[3])

    // MARK: Naming

    @Test func twoThousandSameTitledEpisodesAreNamedInUnderASecondEachNameFree() async throws {
        let fixture = try TransferFixture()
        // A file of the title is there already, and " (3)" too: both skipped.
        let directory = fixture.file("Podcasts/Crowd")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data().write(to: directory.appendingPathComponent("Daily.mp3"))
        try Data().write(to: directory.appendingPathComponent("Daily (3).mp3"))
        // Nothing listens on port 1: each download fails to connect and waits to be retried.
        let nowhere = URL(string: "http://127.0.0.1:1/daily.mp3")!
        let episodes = (1...2000).map { TransferFixture.episode("d-\($0)", title: "Daily", url: nowhere) }

        let started = ContinuousClock.now
        fixture.transfers.enqueue(feed: "http://feeds.test/crowd.xml", feedTitle: "Crowd", episodes: episodes)
        let took = ContinuousClock.now - started
        print("2,000 same-titled episodes named and journaled in \(took)")
        #expect(took < .seconds(1), "\(took)")

        let names = try #require(fixture.transfers.journalStatistics)
        #expect(names.appends == 1 && names.snapshots == 0, "one append for the batch: \(names)")
        let (jobs, _, problem) = TransferJournal(file: fixture.state.appendingPathComponent("transfers.json")).load()
        #expect(problem == nil)
        let paths = jobs.map(\.relativePath)
        #expect(paths.count == 2000 && Set(paths).count == 2000, "every name its own")
        #expect(paths.prefix(3) == ["Podcasts/Crowd/Daily (2).mp3", "Podcasts/Crowd/Daily (4).mp3", "Podcasts/Crowd/Daily (5).mp3"],
                "\(paths.prefix(3))")
        #expect(paths.last == "Podcasts/Crowd/Daily (2002).mp3")

        // A second batch of the same episodes adds nothing; one more takes the next number.
        fixture.transfers.enqueue(feed: "http://feeds.test/crowd.xml", feedTitle: "Crowd",
                                  episodes: episodes + [TransferFixture.episode("d-2001", title: "Daily", url: nowhere)])
        let again = TransferJournal(file: fixture.state.appendingPathComponent("transfers.json")).load().jobs
        #expect(again.count == 2001 && again.last?.relativePath == "Podcasts/Crowd/Daily (2003).mp3")
        try await fixture.finish()
    }

    @Test func claimsSkipFilesAndNamesTakenAndCountOnPerName() throws {
        let root = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("P/F"), withIntermediateDirectories: true)
        try Data().write(to: root.appendingPathComponent("P/F/A.mp3"))
        var claims = FileNameClaims(root: root, jobs: ["P/F/A (2).mp3", "P/F/B.mp3"])
        #expect(claims.claim("P/F/A.mp3") == "P/F/A (3).mp3")
        #expect(claims.claim("P/F/A.mp3") == "P/F/A (4).mp3")
        #expect(claims.claim("P/F/B.mp3") == "P/F/B (2).mp3")
        #expect(claims.claim("P/F/C.mp3") == "P/F/C.mp3")
        #expect(claims.claim("P/G/A.mp3") == "P/G/A.mp3", "another directory, not made yet: free")
        #expect(claims.claim("P/F/A (4).mp3") == "P/F/A (4) (2).mp3", "a name given in the batch is taken")
    }

    // MARK: If-Range

    /// First 200 with ETag "v1", cut half-way; the resume's `If-Range: "v1"` is ignored and
    /// answered 206 with ETag "v2" and v2's tail. The file must become v2, whole.
    @Test func aServerIgnoringIfRangeGivesTheNewVersionByteExactNotASplice() async throws {
        let (v1, v2) = (Self.v1, Self.v2)
        let wholeAnswers = Counter()
        let server = try ScriptedHTTPServer { request, connection in
            if let range = request.header("Range"), let start = Int(range.dropFirst("bytes=".count).dropLast()) {
                connection.writeHead("206 Partial Content", [("ETag", "\"v2\""), ("Content-Type", "audio/mpeg"),
                                                             ("Content-Range", "bytes \(start)-\(v2.count - 1)/\(v2.count)"),
                                                             ("Content-Length", "\(v2.count - start)")])
                connection.write(v2[start...])
            } else if wholeAnswers.next() == 0 {
                connection.writeHead("200 OK", [("ETag", "\"v1\""), ("Content-Type", "audio/mpeg"), ("Content-Length", "\(v1.count)")])
                connection.write(v1.prefix(v1.count / 2))
            } else {
                connection.writeHead("200 OK", [("ETag", "\"v2\""), ("Content-Type", "audio/mpeg"), ("Content-Length", "\(v2.count)")])
                connection.write(v2)
            }
        }
        let fixture = try TransferFixture()
        fixture.transfers.enqueue(feed: "http://feeds.test/a.xml", feedTitle: "Show",
                                  episodes: [TransferFixture.episode("e", title: "Episode", url: server.url("episode.mp3"))])
        #expect(waitUntil(timeout: 20) { !fixture.finished.isEmpty }, "\(fixture.log.all)")
        let file = fixture.file("Podcasts/Show/Episode.mp3")
        let written = try Data(contentsOf: file)
        #expect(written == v2, "\(written.count) bytes; v1 \(v1.count), v2 \(v2.count); spliced: \(written.prefix(v1.count / 2) == v1.prefix(v1.count / 2))")
        let requests = server.requests
        print("If-Range-ignoring server: \(requests.map { "\($0.header("Range") ?? "whole") if-range \($0.header("If-Range") ?? "-")" })")
        #expect(requests.count == 3, "\(requests)")
        #expect(requests.count >= 2 && requests[1].header("If-Range") == "\"v1\"" && requests[1].header("Range") != nil, "\(requests)")
        #expect(requests.last?.header("Range") == nil, "started over with the whole file: \(requests)")
        server.stop()
        try await fixture.finish()
    }

    @Test func a206IsTakenOnlyWithTheValidatorSentAndTheOffsetAsked() {
        var job = TransferJob(id: "i", feed: "f", url: URL(string: "http://h/e.mp3")!, relativePath: "P/e.mp3")
        job.validators = FeedValidators(entityTag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 08:00:00 GMT")
        let range = ("Content-Range", "bytes 100-199/200")
        #expect(EnclosureDownloader.continues(job, at: 100, .init([range, ("ETag", "\"v1\"")])))
        #expect(!EnclosureDownloader.continues(job, at: 100, .init([range, ("ETag", "\"v2\"")])))
        #expect(!EnclosureDownloader.continues(job, at: 100, .init([range])), "no validator: not known to be the same")
        #expect(!EnclosureDownloader.continues(job, at: 50, .init([range, ("ETag", "\"v1\"")])))
        // A weak tag is not sent; the date is, and it is what is compared.
        job.validators.entityTag = "W/\"v1\""
        #expect(EnclosureDownloader.continues(job, at: 100, .init([range, ("Last-Modified", "Wed, 25 Nov 2026 08:00:00 GMT")])))
        #expect(!EnclosureDownloader.continues(job, at: 100, .init([range, ("Last-Modified", "Thu, 26 Nov 2026 08:00:00 GMT")])))
    }

    // MARK: Low speed

    /// Two enclosures trickling a byte every 0.2 s take both slots; the third, normal one
    /// gets one as soon as the low-speed limit (1 KiB/s over 2 s here) cuts a trickle.
    @Test func twoTricklingEnclosuresGiveTheirSlotsUpAndANormalOneFinishesWithinTheWindow() async throws {
        let source = Self.v1
        let server = try ScriptedHTTPServer { request, connection in
            if request.path.hasPrefix("/slow") {
                connection.writeHead("200 OK", [("Content-Type", "audio/mpeg"), ("Content-Length", "\(source.count)")])
                var sent = 0
                while connection.isOpen && sent < source.count {
                    connection.write(source[sent..<sent + 1])
                    sent += 1
                    connection.pause(0.2)
                }
            } else {
                connection.writeHead("200 OK", [("Content-Type", "audio/mpeg"), ("Content-Length", "\(source.count)")])
                connection.write(source)
            }
        }
        let window = LowSpeedLimit(bytesPerSecond: 1024, seconds: 2)
        // A cut trickle comes back only after a minute: the normal one has the slot.
        let fixture = try TransferFixture(lowSpeed: window, firstRetryDelay: 60, maximumRetryDelay: 60)
        let episodes = ["slow-a", "slow-b", "normal"].map { TransferFixture.episode($0, title: $0, url: server.url("\($0).mp3")) }
        let started = ContinuousClock.now
        fixture.transfers.enqueue(feed: "http://feeds.test/t.xml", feedTitle: "Trickle", episodes: episodes)
        #expect(waitUntil(timeout: 30) { fixture.finished.contains("Podcasts/Trickle/normal.mp3") }, "\(fixture.log.all)")
        let took = ContinuousClock.now - started
        print("behind two trickling enclosures, the normal one finished \(took) after it was queued (window 2 s)")
        #expect(took < .seconds(4), "within the window and a step more, not a minute: \(took)")
        #expect(try Data(contentsOf: fixture.file("Podcasts/Trickle/normal.mp3")) == source)
        #expect(fixture.log.count(containing: "slower than 1024 bytes/s over 2 s") >= 1, "\(fixture.log.all)")
        #expect(waitUntil(timeout: 10) { fixture.log.count(containing: "slower than 1024 bytes/s over 2 s") == 2 },
                "both trickles cut: \(fixture.log.all)")
        #expect(fixture.transfers.activeCount == 0, "no slot held")
        #expect(fixture.log.all.contains { $0.contains("slow-a.mp3: slower than") && $0.contains("trying again in 60 s") })
        server.stop()
        try await fixture.finish()
    }

    // MARK: Journal

    /// 10,000 queued episodes, then their downloads failing and retried over and over: each
    /// change is an append of one line, never the 3.5 MB journal again.
    @Test func tenThousandQueuedEpisodesCostALinePerChangeNotTheWholeJournal() async throws {
        // Held until the batch's own cost is read: the first failures come after.
        let gate = Gate()
        let server = try ScriptedHTTPServer { _, connection in
            gate.wait()
            connection.writeHead("503 Service Unavailable", [("Content-Length", "0")])
        }
        // Each job waits 30 s after a failure: the next ones are tried meanwhile, once each.
        let fixture = try TransferFixture(firstRetryDelay: 30, maximumRetryDelay: 30)
        let episodes = (1...10_000).map { TransferFixture.episode("e-\($0)", title: "Episode \($0)", url: server.url("\($0).mp3")) }
        fixture.transfers.enqueue(feed: "http://feeds.test/big.xml", feedTitle: "Big", episodes: episodes)
        let queued = try #require(fixture.transfers.journalStatistics)
        let journal = TransferJournal(file: fixture.state.appendingPathComponent("transfers.json"))
        let whole = try JSONEncoder.feeds.encode(journal.load().jobs).count
        print("10,000 queued: \(queued); the whole journal, as each change rewrote it: \(whole) bytes")
        #expect(queued.appends == 1 && queued.snapshots == 0)
        gate.open()

        #expect(waitUntil(timeout: 60) { fixture.log.count(containing: "trying again in") >= 300 }, "\(fixture.log.all.suffix(5))")
        await fixture.transfers.stop()
        let after = try #require(fixture.transfers.journalStatistics)
        let changes = after.appends - queued.appends
        let perChange = (after.appendedBytes - queued.appendedBytes) / max(1, changes)
        print("after \(fixture.log.count(containing: "trying again in")) retries: \(after); \(perChange) bytes per change")
        #expect(changes >= 300, "each retry is a change: \(after)")
        #expect(after.snapshots == 0, "never the whole journal again: \(after)")
        #expect(perChange < 1024, "\(perChange) bytes per change")
        // What was appended is what a restart finds.
        let (jobs, replayed, problem) = journal.load()
        #expect(problem == nil && jobs.count == 10_000 && replayed == 10_000 + changes)
        #expect(jobs.reduce(0) { $0 + $1.failures } == changes, "every failure counted")
        server.stop()
        try await fixture.finish()
    }

    @Test func theJournalReplaysItsChangesOverTheSnapshotAndIgnoresALineCutShort() throws {
        let state = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        let journal = TransferJournal(file: state.appendingPathComponent("transfers.json"))
        let queue = DispatchQueue(label: "journal-test")
        let writer = TransferJournalWriter(journal: journal, queue: queue)
        func job(_ n: Int) -> TransferJob { TransferJob(id: "\(n)", feed: "f", url: URL(string: "http://h/\(n).mp3")!, relativePath: "P/\(n).mp3") }
        var jobs = [job(1), job(2)]
        try queue.sync {
            try writer.snapshot(jobs)
            jobs.append(job(3))
            try writer.record([.put(job(3))], jobs: jobs)
            jobs[0].failures = 4
            try writer.record([.put(jobs[0])], jobs: jobs)
            jobs.remove(at: 1)
            try writer.record([.remove("2")], jobs: jobs)
        }
        #expect(journal.load().jobs == jobs)
        #expect(journal.load().changes == 3)
        // A crash cut the last append short: the lines before it stand.
        let handle = try FileHandle(forWritingTo: journal.changesFile)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"put\":{\"id\":\"4".utf8))
        try handle.close()
        let (loaded, changes, problem) = journal.load()
        #expect(loaded == jobs && changes == 3 && problem == nil)
        // A new snapshot folds the changes in; replaying them again over it changes nothing.
        let changeLines = try Data(contentsOf: journal.changesFile)
        try queue.sync { try writer.snapshot(jobs) }
        #expect(try Data(contentsOf: journal.changesFile).isEmpty)
        try changeLines.write(to: journal.changesFile)
        #expect(journal.load().jobs == jobs, "a crash between the snapshot and the emptying loses nothing")
    }

    // MARK: Redirects, credentials, errno

    @Test func anEnclosureRedirectLoopFailsForGoodAtOnce() async throws {
        let server = try ScriptedHTTPServer { request, connection in
            connection.writeHead("302 Found", [("Location", request.path == "/a.mp3" ? "/b.mp3" : "/a.mp3"), ("Content-Length", "0")])
        }
        let fixture = try TransferFixture()
        fixture.transfers.enqueue(feed: "http://feeds.test/r.xml", feedTitle: "Loop",
                                  episodes: [TransferFixture.episode("r", title: "Loop", url: server.url("a.mp3"))])
        #expect(waitUntil(timeout: 10) { fixture.log.count(containing: "failed: a redirect loop") == 1 }, "\(fixture.log.all)")
        let requests = server.requests.count
        #expect(fixture.log.count(containing: "trying again") == 0, "not retried: \(fixture.log.all)")
        #expect(requests <= 6, "one attempt: \(server.requests)")
        #expect(TransferJournal(file: fixture.state.appendingPathComponent("transfers.json")).load().jobs.isEmpty, "the job is gone")
        server.stop()
        try await fixture.finish()
    }

    @Test func credentialsInAnEnclosureURLAreNeverLogged() async throws {
        let server = try ScriptedHTTPServer { _, connection in
            connection.writeHead("401 Unauthorized", [("Content-Length", "0")])
        }
        let fixture = try TransferFixture()
        let secret = "s3cret-\(UUID().uuidString)"
        var components = URLComponents(url: server.url("private.mp3"), resolvingAgainstBaseURL: false)!
        components.user = "listener"
        components.password = secret
        let tokenOnly = URL(string: "http://\(secret)@127.0.0.1:\(server.port)/token.mp3")!
        fixture.transfers.enqueue(feed: "http://feeds.test/p.xml", feedTitle: "Private",
                                  episodes: [TransferFixture.episode("p", title: "Private", url: components.url!),
                                             TransferFixture.episode("t", title: "Token", url: tokenOnly)])
        #expect(waitUntil(timeout: 10) { fixture.log.count(containing: "failed: HTTP 401") == 2 }, "\(fixture.log.all)")
        #expect(fixture.log.all.allSatisfy { !$0.contains(secret) }, "\(fixture.log.all)")
        #expect(fixture.log.all.contains { $0.contains("http://listener:***@127.0.0.1:\(server.port)/private.mp3") }, "\(fixture.log.all)")
        #expect(fixture.log.all.contains { $0.contains("http://***@127.0.0.1:\(server.port)/token.mp3") }, "\(fixture.log.all)")
        server.stop()
        try await fixture.finish()
    }

    @Test func urlsAreRedactedWhereverTheirUserInformationIs() {
        #expect(RedactedURL.text("https://u:p@h.test/a?b=c@d") == "https://u:***@h.test/a?b=c@d")
        #expect(RedactedURL.text("https://token@h.test:8080/") == "https://***@h.test:8080/")
        #expect(RedactedURL.text("https://a@b:p@h.test") == "https://a@b:***@h.test", "the last @ ends the user information")
        #expect(RedactedURL.text("https://h.test/x@y") == "https://h.test/x@y", "an @ in the path is not user information")
        #expect(RedactedURL.text("not a url") == "not a url")
    }

    /// A full disk as the system says it, not `NSCocoaErrorDomain Code=640`: a real write to
    /// `/dev/full` (which fails every write with ENOSPC), and Foundation's own error for it.
    @Test func aFullDiskIsNoSpaceLeftOnDevice() throws {
        let queue = DispatchQueue(label: "enospc-test")
        let file = PartFile(url: URL(fileURLWithPath: "/dev/full"), queue: queue)
        let error = try #require(queue.sync { () -> (any Error)? in
            defer { file.close() }
            do { try file.append(Data(count: 4096)) } catch { return error }
            return nil
        })
        print("a write to /dev/full: \(error) -> \(ErrorText.describe(error))")
        #expect(ErrorText.describe(error) == "No space left on device")
        #expect(ErrorText.describe(CocoaError(.fileWriteOutOfSpace)) == "No space left on device")
        #expect(ErrorText.describe(POSIXError(.ENOSPC)) == "No space left on device")
        #expect(ErrorText.describe(CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "x.part was removed while it was written"]))
                == "x.part was removed while it was written", "the daemon's own words stay")
    }
}

extension HostileTransferTests {
    /// A stop asked for while a huge batch is being named ends the batch at its next chunk:
    /// what was named is journaled, the rest is left for the next start (enqueue says so).
    @Test func aStopEndsAHugeBatchAtItsNextChunk() async throws {
        let fixture = try TransferFixture()
        let nowhere = URL(string: "http://127.0.0.1:1/daily.mp3")!
        let episodes = (1...200_000).map { TransferFixture.episode("h-\($0)", title: "Daily", url: nowhere) }
        let taken = Mutex<Bool?>(nil)
        let started = ContinuousClock.now
        let done = DispatchSemaphore(value: 0)
        let transfers = fixture.transfers
        DispatchQueue.global().async {
            let result = transfers.enqueue(feed: "http://feeds.test/huge.xml", feedTitle: "Huge", episodes: episodes)
            taken.withLock { $0 = result }
            done.signal()
        }
        // Asked while the batch is under way or about to be: either way it ends at a chunk's
        // border, and without the stop it would take the whole 200,000 (seconds).
        let asked = ContinuousClock.now
        transfers.requestStop()
        done.wait()
        let tookAfterStop = ContinuousClock.now - asked
        print("a 200,000-episode batch stopped \(tookAfterStop) after the stop was asked, \(asked - started) into it")
        #expect(taken.withLock { $0 } == false, "the batch was cut short")
        #expect(tookAfterStop < .milliseconds(500), "\(tookAfterStop)")
        let journaled = TransferJournal(file: fixture.state.appendingPathComponent("transfers.json")).load().jobs
        #expect(journaled.count < 200_000 && journaled.count % HostileTransferTests.chunk == 0, "\(journaled.count) journaled")
        try await fixture.finish()
    }

    static let chunk = BackgroundTransfers.enqueueChunk
}

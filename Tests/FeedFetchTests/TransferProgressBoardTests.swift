@testable import FeedFetch
import Foundation
import Synchronization
import TestSupport
import Testing

/// The downloads' progress as the web page's list reads it (``TransferProgressBoard``): which
/// downloads a bounded list shows, in which order, with the bytes their attempts stored, and
/// the ended ones kept; and the board as ``BackgroundTransfers`` keeps it.
@Suite struct TransferProgressBoardTests {
    static func job(_ n: Int) -> TransferJob {
        TransferJob(id: "feed\n\(n)", feed: "feed", url: URL(string: "http://h/\(n).mp3")!, relativePath: "Podcasts/F/\(n).mp3",
                    title: "Episode \(n)", feedTitle: "F")
    }

    @Test func aBoundedListRunningFirstThenWaitingThenEndedThenTheOldestQueued() {
        let board = TransferProgressBoard()
        let changes = Atomic<Int>(0)
        board.setObserver { changes.add(1, ordering: .relaxed) }
        board.add((1...30).map(Self.job))
        #expect(changes.load(ordering: .relaxed) == 1, "a batch is one change")
        var snapshot = board.snapshot(limit: 20)
        #expect(snapshot.queued == 30 && snapshot.active == 0 && snapshot.waiting == 0)
        #expect(snapshot.downloads.map(\.number) == Array(1...20), "the oldest queued, in order")
        #expect(snapshot.downloads.first?.title == "Episode 1" && snapshot.downloads.first?.feedTitle == "F")

        board.set("feed\n5", .downloading)
        board.set("feed\n7", .waiting("HTTP 503 Service Unavailable"))
        let counter = try! #require(board.counter(for: "feed\n5"))
        counter.begin(received: 100, expected: 1_000)
        counter.received(500)
        board.end("feed\n9", .failed("not audio"))
        board.end("feed\n2", .finished)
        snapshot = board.snapshot(limit: 6)
        #expect(snapshot.active == 1 && snapshot.waiting == 1 && snapshot.queued == 26)
        #expect(snapshot.downloads.map(\.number) == [5, 7, 2, 9, 1, 3], "\(snapshot.downloads.map(\.number))")
        #expect(snapshot.downloads[0].state == .downloading && snapshot.downloads[0].received == 500 && snapshot.downloads[0].expected == 1_000)
        #expect(snapshot.downloads[1].state == .waiting("HTTP 503 Service Unavailable"))
        #expect(snapshot.downloads[3].state.name == "failed" && snapshot.downloads[3].state.reason == "not audio")
        #expect(changes.load(ordering: .relaxed) == 5, "each change of state told once; bytes are not")

        // A finished download shows all its bytes; only the last few ended are kept.
        board.end("feed\n5", .finished)
        let done = board.snapshot(limit: 3).downloads.first { $0.number == 5 }
        #expect(done?.received == 1_000 && done?.state == .finished)
        for n in 10...29 { board.end("feed\n\(n)", .finished) }
        snapshot = board.snapshot(limit: 100)
        let ended = snapshot.downloads.filter { $0.state == .finished || $0.state.name == "failed" }
        #expect(ended.map(\.number) == Array((22...29).reversed()), "the \(TransferProgressBoard.endedKept) newest, newest first")
        #expect(snapshot.queued == 6 && snapshot.downloads.count == snapshot.waiting + ended.count + snapshot.queued)
    }

    @Test func theTransfersKeepTheBoardEveryJobCountedFewListed() async throws {
        let fixture = try TransferFixture(firstRetryDelay: 60, maximumRetryDelay: 60)
        defer { Task { try await fixture.finish() } }
        // Nothing listens on port 1: an attempt fails to connect and waits a minute for its
        // retry, and the next job takes its slot.
        let nowhere = URL(string: "http://127.0.0.1:1/e.mp3")!
        fixture.transfers.enqueue(feed: "http://feeds.test/f.xml", feedTitle: "Feed",
                                  episodes: (1...40).map { TransferFixture.episode("e-\($0)", title: "E \($0)", url: nowhere) })
        let board = fixture.transfers.progress
        #expect(waitUntil(timeout: 30) { board.snapshot(limit: 20).waiting >= 2 }, "\(board.snapshot(limit: 20))")
        let snapshot = board.snapshot(limit: 20)
        #expect(snapshot.active + snapshot.waiting + snapshot.queued == 40, "every job counted")
        #expect(snapshot.active <= 2 && snapshot.downloads.count == 20, "twenty listed")
        let states = snapshot.downloads.map(\.state.name)
        let rank = ["downloading": 0, "waiting": 1, "queued": 2]
        #expect(zip(states.dropFirst(), states).allSatisfy { rank[$0]! >= rank[$1]! }, "running, waiting, queued: \(states)")
        let queued = snapshot.downloads.filter { $0.state == .queued }.map(\.number)
        #expect(queued == queued.sorted() && queued.count == 20 - snapshot.active - snapshot.waiting, "the oldest queued first")
        let waiting = snapshot.downloads.filter { $0.state.name == "waiting" }
        #expect(waiting.allSatisfy { ($0.state.reason ?? "").contains("connect") }, "\(waiting)")
        #expect(snapshot.downloads.allSatisfy { $0.title == "E \($0.number)" && $0.feedTitle == "Feed" })
    }
}

@testable import FeedFetch
import Feeds
import Foundation
import Logging
import NIOPosix
import Synchronization
import TestSupport

/// Background transfers into a scratch music directory, with a journal in a scratch state
/// directory, a real downloader (on NIO's shared event loop group) and a recording log.
struct TransferFixture {
    let music: URL
    let state: URL
    let log = RecordingLogHandler.Lines()
    let downloader: EnclosureDownloader
    let transfers: BackgroundTransfers
    private let box: Box

    final class Box: Sendable {
        let finished = Mutex<[String]>([])
    }

    init(lowSpeed: LowSpeedLimit = LowSpeedLimit(), firstRetryDelay: Double = 0.05, maximumRetryDelay: Double = 0.05,
         journal: Bool = true) throws {
        music = try TestMedia.scratchDirectory()
        state = try TestMedia.scratchDirectory()
        downloader = EnclosureDownloader(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, minimumFreeSpace: 0,
                                         limits: .init(lowSpeed: lowSpeed))
        let box = Box()
        self.box = box
        let lines = log
        transfers = BackgroundTransfers(
            configuration: .init(musicDirectory: music, firstRetryDelay: firstRetryDelay, maximumRetryDelay: maximumRetryDelay),
            downloader: downloader,
            journal: journal ? TransferJournal(file: state.appendingPathComponent("transfers.json")) : nil,
            logger: Logger(label: "transfers-test") { _ in RecordingLogHandler(lines: lines) },
            finished: { path, _ in box.finished.withLock { $0.append(path) } })
    }

    /// The relative paths reported finished, in order.
    var finished: [String] { box.finished.withLock { $0 } }

    /// An episode titled `title` whose enclosure is `url`.
    static func episode(_ id: String, title: String, url: URL) -> Episode {
        Episode(id: id, title: title, enclosure: Enclosure(url: url, length: nil, type: "audio/mpeg"))
    }

    func file(_ relativePath: String) -> URL { music.appendingPathComponent(relativePath) }

    /// Stops the transfers and the client, and removes the directories.
    func finish() async throws {
        await transfers.stop()
        try await downloader.shutdown()
        try? FileManager.default.removeItem(at: music)
        try? FileManager.default.removeItem(at: state)
    }
}

/// A count shared with a server's handler: how many times something happened before.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    /// The count before this call.
    func next() -> Int { value.add(1, ordering: .relaxed).oldValue }
}

/// Holds a server's handlers until the test opens it.
final class Gate: Sendable {
    private let isOpen = Atomic<Bool>(false)

    func open() { isOpen.store(true, ordering: .releasing) }

    /// Returns once open (or after 30 s, so a failed test does not hang).
    func wait() { _ = waitUntil(timeout: 30) { isOpen.load(ordering: .acquiring) } }
}

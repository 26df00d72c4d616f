import Dispatch
import Foundation
import Logging
import MPDProtocol
import TestSupport
import Testing
@testable import DaemonCore

/// The queries' index of a database is built off the controller's queue, before the first
/// query needs it, and it agrees with the database.
@Suite struct LibraryIndexTests {
    @Test func aLoadedDatabaseIsIndexedBeforeAnyQuery() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("library-index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let library = MusicLibrary(root: root)
        var database = SongDatabase(root: library.root.path)
        database.updated = 1
        for number in (0..<2_000).reversed() {
            let uri = "Artist \(number % 40)/Album \(number % 7)/\(number).mp3"
            database.records[uri] = SongDatabase.Record(uri: uri, modified: Int64(number), size: 1, duration: 1, format: "44100:16:2",
                                                        tags: [SongInfo.Tag(.artist, "Artist \(number % 40)"), SongInfo.Tag(.title, "\(number)")])
        }
        let file = root.appendingPathComponent("database.json")
        try JSONEncoder().encode(database).write(to: file)

        let queue = DispatchQueue(label: "test.controller")
        let updater = LibraryUpdater(library: library, songIndex: SongIndex(), events: ControlEvents(queue: queue), queue: queue,
                                     logger: Logger(label: "test"), file: file)
        #expect(waitUntil(timeout: 20) { queue.sync { updater.isIndexPrepared } }, "no index without a query")
        let index = queue.sync { updater.index }
        #expect(index.songs.map(\.uri) == database.sorted.map(\.uri))
        #expect(index.blocks.map(\.info) == database.sorted.map(\.info))
    }
}

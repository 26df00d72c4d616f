import Foundation
import MPDProtocol
import Testing
@testable import DaemonCore

/// The sticker database in SQLite, in process: what mpd's `StickerDatabase` does,
/// a file that survives being closed, and files it cannot use.
@Suite("StickerStore")
struct StickerStoreTests {
    /// A fresh directory per test, removed after it.
    final class Directory {
        let url: URL
        init() throws {
            url = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                              appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var file: URL { url.appendingPathComponent("sticker.sql") }
    }

    @Test func aStickerIsSetReplacedListedByNameAndDeleted() throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        #expect(try store.value(uri: "a.mp3", name: "rating") == nil)
        #expect(try store.set(uri: "a.mp3", name: "rating", value: "3"))
        #expect(try store.set(uri: "a.mp3", name: "rating", value: "5"))
        #expect(try store.set(uri: "a.mp3", name: "Playcount", value: "12"))
        #expect(try store.set(uri: "b.mp3", name: "rating", value: "1"))
        #expect(try store.value(uri: "a.mp3", name: "rating") == "5")
        // By name in byte order, as mpd's std::map lists them: upper case first.
        #expect(try store.stickers(uri: "a.mp3").map { "\($0.name)=\($0.value)" } == ["Playcount=12", "rating=5"])
        #expect(try store.delete(uri: "a.mp3", name: "rating"))
        #expect(try !store.delete(uri: "a.mp3", name: "rating"))
        #expect(try store.stickers(uri: "a.mp3").map(\.name) == ["Playcount"])
        #expect(try store.delete(uri: "a.mp3"))
        #expect(try !store.delete(uri: "a.mp3"))
        #expect(try store.stickers(uri: "a.mp3").isEmpty)
        #expect(try store.value(uri: "b.mp3", name: "rating") == "1")
    }

    @Test func anEmptyNameIsIgnoredAsMPDIgnoresIt() throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        #expect(try !store.set(uri: "a.mp3", name: "", value: "x"))
        #expect(try store.value(uri: "a.mp3", name: "") == nil)
        #expect(try store.stickers(uri: "a.mp3").isEmpty)
    }

    @Test func findTakesTheSongsBelowADirectoryAndComparesValuesAsText() throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        for (uri, value) in [("rock/b.mp3", "9"), ("rock/a.mp3", "10"), ("rockabilly/c.mp3", "7"), ("pop/d.mp3", "3"),
                             ("r_ck/e.mp3", "1")] {
            try store.set(uri: uri, name: "rating", value: value)
        }
        try store.set(uri: "rock/a.mp3", name: "other", value: "x")
        func uris(_ query: StickerQuery) throws -> [String] { try store.find(query).map(\.uri) }
        // By URI when no sort is asked.
        #expect(try uris(StickerQuery(directory: "", name: "rating"))
                == ["pop/d.mp3", "r_ck/e.mp3", "rock/a.mp3", "rock/b.mp3", "rockabilly/c.mp3"])
        // A directory is a prefix with a slash: not `rockabilly`, and `_` is no wildcard.
        #expect(try uris(StickerQuery(directory: "rock", name: "rating")) == ["rock/a.mp3", "rock/b.mp3"])
        #expect(try uris(StickerQuery(directory: "r_ck", name: "rating")) == ["r_ck/e.mp3"])
        // mpd's quirk: a trailing slash finds nothing.
        #expect(try uris(StickerQuery(directory: "rock/", name: "rating")).isEmpty)
        // Text comparison: "10" < "9".
        #expect(try uris(StickerQuery(directory: "", name: "rating", match: .init(.less, "9")))
                == ["r_ck/e.mp3", "pop/d.mp3", "rock/a.mp3", "rockabilly/c.mp3"].sorted())
        #expect(try uris(StickerQuery(directory: "", name: "rating", match: .init(.greater, "7"))) == ["rock/b.mp3"])
        #expect(try store.find(StickerQuery(directory: "", name: "rating", match: .init(.equal, "10"))).map(\.value) == ["10"])
        #expect(try uris(StickerQuery(directory: "", name: "nothing")).isEmpty)
    }

    @Test func findSortsByURIValueOrTheValuesInteger() throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        for (uri, value) in [("a.mp3", "9"), ("b.mp3", "10"), ("c.mp3", "2"), ("d.mp3", "x")] {
            try store.set(uri: uri, name: "rating", value: value)
        }
        func values(_ key: StickerQuery.SortKey, descending: Bool = false) throws -> [String] {
            try store.find(StickerQuery(directory: "", name: "rating", sort: .init(key: key, descending: descending))).map(\.value)
        }
        #expect(try values(.value) == ["10", "2", "9", "x"])
        #expect(try values(.value, descending: true) == ["x", "9", "2", "10"])
        // SQLite's CAST: "x" is 0.
        #expect(try values(.valueInt) == ["x", "2", "9", "10"])
        #expect(try values(.valueInt, descending: true) == ["10", "9", "2", "x"])
        #expect(try values(.uri, descending: true) == ["x", "2", "10", "9"])
    }

    @Test func theStickersOutliveTheStoreWithMPDsSchema() throws {
        let directory = try Directory()
        do {
            let store = try StickerStore(file: directory.file)
            try store.set(uri: "a.mp3", name: "rating", value: "4")
        }
        let again = try StickerStore(file: directory.file)
        #expect(try again.value(uri: "a.mp3", name: "rating") == "4")
        // mpd's table and index, so that mpd 0.23 reads the file (the sqlite3 shell shows the schema).
        let schema = try Self.sqlite3(directory.file, ".schema")
        #expect(schema.contains("CREATE TABLE sticker(type VARCHAR NOT NULL, uri VARCHAR NOT NULL, name VARCHAR NOT NULL, value VARCHAR NOT NULL)"))
        #expect(schema.contains("CREATE UNIQUE INDEX sticker_value ON sticker(type, uri, name)"))
        #expect(try Self.sqlite3(directory.file, "SELECT type, uri, name, value FROM sticker") == "song|a.mp3|rating|4\n")
    }

    @Test func aFileThatIsNotADatabaseIsRefusedWithSQLitesWords() throws {
        let directory = try Directory()
        try Data(repeating: 0x42, count: 8192).write(to: directory.file)
        #expect {
            _ = try StickerStore(file: directory.file)
        } throws: { error in
            (error as? StickerStoreError)?.description.contains("not a database") == true
        }
        // Left as it was: the daemon never overwrites what it cannot read.
        #expect(try Data(contentsOf: directory.file) == Data(repeating: 0x42, count: 8192))
    }

    @Test func aFileDamagedWhileOpenFailsEachCallWithSQLitesWordsAndNothingElse() throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        try store.set(uri: "a.mp3", name: "rating", value: "4")
        // Overwritten in place (the same inode), as a failing disk or another program might.
        let handle = try FileHandle(forWritingTo: directory.file)
        try handle.write(contentsOf: Data(repeating: 0x42, count: 4096))
        try handle.close()
        for call in [{ _ = try store.value(uri: "a.mp3", name: "rating") }, { try store.set(uri: "a.mp3", name: "rating", value: "5") },
                     { _ = try store.find(StickerQuery(directory: "", name: "rating")) }] as [() throws -> Void] {
            #expect {
                try call()
            } throws: { error in
                let description = (error as? StickerStoreError)?.description ?? ""
                return description.contains("not a database") || description.contains("malformed")
            }
        }
    }

    @Test func aFileInADirectoryThatIsMissingCannotBeOpened() throws {
        let directory = try Directory()
        #expect {
            _ = try StickerStore(file: directory.url.appendingPathComponent("missing/sticker.sql"))
        } throws: { error in
            (error as? StickerStoreError)?.description.contains("unable to open") == true
        }
    }

    @Test func followMovesRenamedSongsStickersAndDeletesRemovedOnes() async throws {
        let directory = try Directory()
        let store = try StickerStore(file: directory.file)
        try store.set(uri: "old/a.mp3", name: "rating", value: "5")
        try store.set(uri: "old/a.mp3", name: "playcount", value: "2")
        try store.set(uri: "gone.mp3", name: "rating", value: "1")
        try store.set(uri: "kept.mp3", name: "rating", value: "3")
        let changes = SongMoves(moves: [.init(from: "old/a.mp3", to: "new/a.mp3")], removals: ["gone.mp3"])
        let (followed, rows) = try await withCheckedThrowingContinuation { continuation in
            store.follow({ changes }) { continuation.resume(with: $0) }
        }
        #expect(followed == changes && rows == 3)
        #expect(try store.stickers(uri: "new/a.mp3").map(\.name) == ["playcount", "rating"])
        #expect(try store.stickers(uri: "old/a.mp3").isEmpty)
        #expect(try store.stickers(uri: "gone.mp3").isEmpty)
        #expect(try store.value(uri: "kept.mp3", name: "rating") == "3")
    }

    /// Runs Debian's sqlite3 shell on `file` (scripts/bootstrap installs it).
    static func sqlite3(_ file: URL, _ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [file.path, command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self)
    }
}

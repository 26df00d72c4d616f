import Foundation
import QueuePlayer
import Testing
import TestSupport
@testable import DaemonCore

/// The partition hands the player one song ahead (the look-ahead). When the partition falls
/// behind (a busy machine, an output that does not pace, a song shorter than the partition's
/// reaction), the player can play the look-ahead to its end before the partition hands it the
/// song after that. The queue must go on with that song, as mpd's playlist resumes a stopped
/// player: no song is skipped without a word. Each test holds the partition's queue while the
/// player runs out, which is the interleaving that used to end the queue.
@Suite struct HandOverRaceTests {
    /// Three songs in three formats: 4 s at 44.1 kHz stereo, 3 s at 22.05 kHz mono, 3 s at 48 kHz stereo.
    static func threeFormats(in directory: URL) throws -> [URL] {
        [
            try TestMedia.makeTone(seconds: 4, frequency: 440, rate: 44_100, channels: 2, in: directory, name: "a-44k-stereo"),
            try TestMedia.makeTone(seconds: 3, frequency: 550, rate: 22_050, channels: 1, in: directory, name: "b-22k-mono"),
            try TestMedia.makeTone(seconds: 3, frequency: 660, rate: 48_000, channels: 2, in: directory, name: "c-48k-stereo"),
        ]
    }

    /// Plays `songs` from the first, holds the partition until the player has nothing left,
    /// then lets it catch up; returns whether the last song then became the current item.
    static func lastSongPlaysAfterThePlayerRanOut(_ fixture: PartitionFixture, songs: [URL]) async throws -> Bool {
        // Held from the start: what the player reports of the look-ahead (its failure, its
        // start) is not taken in before the player has played out both items.
        let gate = fixture.holdPartition { partition in
            partition.append(songs)
            partition.startPlayback(at: 0)
        }
        #expect(fixture.waitFor(.playing))
        // The first song and the look-ahead play out with the partition held: the player ends
        // with nothing after them.
        var ranOut = false
        for _ in 0..<20 where !ranOut {
            fixture.clock.advance(bySeconds: 1)
            ranOut = fixture.player.currentItem == nil && fixture.player.items().isEmpty
        }
        #expect(ranOut, "the player should have played both items it held")
        gate.signal()
        let last = songs[songs.count - 1]
        let reached = waitUntil(timeout: 10) { fixture.player.currentItem?.url == last }
        return reached
    }

    @Test func theSongAfterTheLookAheadPlaysWhenThePlayerRanOutFirst() async throws {
        let fixture = try PartitionFixture()
        let songs = try Self.threeFormats(in: fixture.directory)
        #expect(try await Self.lastSongPlaysAfterThePlayerRanOut(fixture, songs: songs))
        // The queue says so too: the third song (position 2) plays from its start.
        #expect(await fixture.value(of: "song", in: "status") == "2")
        #expect(await fixture.value(of: "state", in: "status") == "play")
        fixture.clock.advance(bySeconds: 1)
        let elapsed = try #require(await fixture.value(of: "elapsed", in: "status").flatMap(Double.init))
        #expect(elapsed > 0.5 && elapsed < 1.5)
        await fixture.close()
    }

    @Test func theSongAfterAFailedLookAheadPlaysWhenThePlayerRanOutFirst() async throws {
        let fixture = try PartitionFixture()
        var songs = try Self.threeFormats(in: fixture.directory)
        // The middle song is a page, not audio: it fails when the player opens it ahead.
        let page = fixture.directory.appendingPathComponent("page.mp3")
        try Data("<html><body>Not found</body></html>\n".utf8).write(to: page)
        songs[1] = page
        #expect(try await Self.lastSongPlaysAfterThePlayerRanOut(fixture, songs: songs))
        #expect(await fixture.value(of: "song", in: "status") == "2")
        #expect(await fixture.value(of: "state", in: "status") == "play")
        await fixture.close()
    }

    /// In consume mode the songs heard leave the queue, whichever way the partition learnt it.
    @Test func consumeModeRemovesTheSongsHeardWhenThePlayerRanOutFirst() async throws {
        let fixture = try PartitionFixture()
        let songs = try Self.threeFormats(in: fixture.directory)
        #expect(await fixture.send("consume 1") == "OK\n")
        #expect(try await Self.lastSongPlaysAfterThePlayerRanOut(fixture, songs: songs))
        #expect(await fixture.value(of: "playlistlength", in: "status") == "1")
        #expect(await fixture.value(of: "song", in: "status") == "0")
        await fixture.close()
    }

    /// At the end of the queue the player stops as before: nothing is played again.
    @Test func theQueueStillEndsWhenTheLookAheadWasTheLastSong() async throws {
        let fixture = try PartitionFixture()
        let songs = Array(try Self.threeFormats(in: fixture.directory).prefix(2))
        let gate = fixture.holdPartition { partition in
            partition.append(songs)
            partition.startPlayback(at: 0)
        }
        #expect(fixture.waitFor(.playing))
        for _ in 0..<20 where fixture.player.currentItem != nil { fixture.clock.advance(bySeconds: 1) }
        gate.signal()
        #expect(await fixture.value(of: "state", in: "status") == "stop")
        #expect(fixture.player.currentItem == nil)
        await fixture.close()
    }
}

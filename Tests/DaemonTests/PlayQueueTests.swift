import TestSupport
import Testing
@testable import DaemonCore

@Suite struct PlayQueueTests {
    typealias Queue = PlayQueue<String>

    static func queue(_ songs: [String], seed: UInt64 = 1) -> Queue {
        var queue = Queue(generator: SplitMix64(seed: seed))
        for song in songs { queue.insert(song) }
        return queue
    }

    /// Plays from the current song on, as the player would: each next song is chosen as the
    /// look-ahead, then starts. Returns the songs heard after the current one, at most `limit`.
    static func playOn(_ queue: inout Queue, limit: Int = 100) -> [String] {
        var heard: [String] = []
        while heard.count < limit, let next = queue.chooseNext() {
            heard.append(queue.entries[next].song)
            queue.songStarted(position: next)
        }
        return heard
    }

    // MARK: - Ids and versions

    @Test func idsAreStableAcrossMovesAndNeverReused() {
        var queue = Self.queue(["a", "b", "c", "d"])
        let ids = queue.entries.map(\.id)
        #expect(Set(ids).count == 4)
        queue.move(0..<2, to: 2)                       // c d a b
        #expect(queue.entries.map(\.song) == ["c", "d", "a", "b"])
        #expect(queue.entries.map(\.id) == [ids[2], ids[3], ids[0], ids[1]])
        for (position, entry) in queue.entries.enumerated() { #expect(queue.position(ofID: entry.id) == position) }
        queue.remove(1..<2)                            // c a b
        let added = queue.insert("e", at: 0)           // e c a b
        #expect(!ids.contains(added), "a removed song's id is not given to a new one")
        #expect(queue.position(ofID: ids[3]) == nil)
        for (position, entry) in queue.entries.enumerated() { #expect(queue.position(ofID: entry.id) == position) }
    }

    @Test func everyChangeBumpsTheVersionAndPlchangesNamesWhatMoved() {
        var queue = Self.queue(["a", "b", "c", "d", "e"])
        let before = queue.version
        #expect(queue.changes(since: 0) == [0, 1, 2, 3, 4])
        #expect(queue.changes(since: before).isEmpty, "nothing changed since the client's version")

        queue.swapAt(1, 3)
        #expect(queue.version == before + 1)
        #expect(queue.changes(since: before) == [1, 3], "only the swapped songs")

        let afterSwap = queue.version
        queue.remove(2..<3)                            // a d b e: d stays, b and e moved up
        #expect(queue.changes(since: afterSwap) == [2, 3])
        #expect(queue.changes(since: before) == [1, 2, 3], "a client two versions behind sees both changes")

        let afterRemove = queue.version
        queue.move(3..<4, to: 0)                       // e a d b: all four moved
        #expect(queue.changes(since: afterRemove) == [0, 1, 2, 3])
        #expect(queue.changes(since: queue.version + 5) == [0, 1, 2, 3], "a version from the future: everything")
    }

    @Test func modesAndPlayingDoNotChangeTheQueueVersion() {
        var queue = Self.queue(["a", "b"])
        let version = queue.version
        queue.setRepeat(true)
        queue.setSingle(.on)
        queue.setConsume(.off)
        queue.makeCurrent(0)
        #expect(queue.version == version)
    }

    // MARK: - What comes next

    @Test func inOrderPlaybackEndsAfterTheLastSong() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(0)
        #expect(Self.playOn(&queue) == ["b", "c"])
        #expect(queue.nextPosition == nil)
        #expect(!queue.stopsAtSongEnd)
    }

    @Test func repeatStartsOverAfterTheLastSong() {
        var queue = Self.queue(["a", "b", "c"])
        queue.setRepeat(true)
        queue.makeCurrent(1)
        #expect(Self.playOn(&queue, limit: 5) == ["c", "a", "b", "c", "a"])
    }

    @Test func singleWithRepeatRepeatsTheSongAndWithoutRepeatStopsAtItsEnd() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(1)
        queue.setSingle(.on)
        queue.setRepeat(true)
        #expect(Self.playOn(&queue, limit: 3) == ["b", "b", "b"])
        queue.setRepeat(false)
        #expect(queue.stopsAtSongEnd)
        #expect(queue.nextPosition == 2, "the player is told which song it pauses on")
    }

    @Test func singleOneshotTurnsItselfOffAtTheNextSong() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(0)
        queue.setSingle(.oneshot)
        #expect(queue.stopsAtSongEnd)
        let changed = queue.songStarted(position: 1)
        #expect(changed)
        #expect(queue.single == .off)
        #expect(!queue.stopsAtSongEnd)
    }

    @Test func consumeRemovesEachSongOnceTheNextStarts() {
        var queue = Self.queue(["a", "b", "c"])
        queue.setConsume(.on)
        queue.makeCurrent(0)
        #expect(Self.playOn(&queue) == ["b", "c"])
        #expect(queue.entries.map(\.song) == ["c"], "the songs that ended are gone; the last one plays on")
        queue.setRepeat(true)
        #expect(queue.nextPosition == nil, "repeat with consume: the last song left does not start over")
    }

    @Test func consumeOneshotRemovesOneSongThenTurnsOff() {
        var queue = Self.queue(["a", "b", "c"])
        queue.setConsume(.oneshot)
        queue.makeCurrent(0)
        let changed = queue.songStarted(position: 1)
        #expect(changed)
        #expect(queue.consume == .off)
        #expect(queue.entries.map(\.song) == ["b", "c"])
        #expect(Self.playOn(&queue) == ["c"])
        #expect(queue.entries.map(\.song) == ["b", "c"])
    }

    @Test func randomPlaysEverySongOnceWithTheCurrentFirst() {
        let songs = (0..<20).map { "s\($0)" }
        for seed: UInt64 in 1...10 {
            var queue = Self.queue(songs, seed: seed)
            queue.makeCurrent(7)
            queue.setRandom(true)
            let heard = Self.playOn(&queue)
            #expect(heard.count == 19 && Set(heard) == Set(songs).subtracting(["s7"]), "seed \(seed): \(heard)")
            #expect(heard != songs.filter { $0 != "s7" }, "seed \(seed): not shuffled")
        }
    }

    @Test func randomWithRepeatDrawsANewOrderEachTimeAround() {
        let songs = (0..<12).map { "s\($0)" }
        var queue = Self.queue(songs, seed: 3)
        queue.makeCurrent(0)
        queue.setRandom(true)
        queue.setRepeat(true)
        let heard = Self.playOn(&queue, limit: 12 * 3)
        let rounds = [Array(heard[11..<23]), Array(heard[23..<35])]
        for round in rounds { #expect(Set(round) == Set(songs), "each time around plays every song once") }
        #expect(rounds[0] != rounds[1], "a new order each time around")
    }

    @Test func theRandomOrderSurvivesMovesAndSwaps() {
        let songs = (0..<10).map { "s\($0)" }
        func shuffled() -> Queue {
            var queue = Self.queue(songs, seed: 5)
            queue.makeCurrent(0)
            queue.setRandom(true)
            return queue
        }
        var moved = shuffled()
        var untouched = shuffled()
        moved.move(2..<5, to: 6)
        moved.swapAt(0, 9)
        #expect(Self.playOn(&moved) == Self.playOn(&untouched))
    }

    @Test func higherPrioritiesPlayFirstInRandomModeAndArePlayedOnce() {
        let songs = (0..<10).map { "s\($0)" }
        var queue = Self.queue(songs, seed: 9)
        queue.makeCurrent(0)
        queue.setRandom(true)
        queue.setPriority(200, for: 8..<10)
        queue.setPriority(100, for: 5..<6)
        let heard = Self.playOn(&queue)
        #expect(Set(heard.prefix(2)) == ["s8", "s9"])
        #expect(heard[2] == "s5")
        #expect(queue.entries.allSatisfy { $0.priority == 0 }, "a song's priority is spent when it starts")
    }

    @Test func aSongAddedInRandomModePlaysAfterTheCurrentSong() {
        var queue = Self.queue(["a", "b", "c"], seed: 2)
        queue.makeCurrent(0)
        queue.setRandom(true)
        _ = queue.songStarted(position: queue.nextPosition!)
        let added = queue.insert("new")
        let heard = Self.playOn(&queue)
        #expect(heard.contains("new"))
        #expect(queue.position(ofID: added) != nil)
    }

    @Test func removingTheCurrentSongLeavesNoCurrentSong() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(1)
        queue.remove(1..<2)
        #expect(queue.currentID == nil)
        #expect(queue.nextPosition == nil)
        queue.makeCurrent(0)
        queue.remove(1..<2)
        #expect(queue.currentPosition == 0, "removing another song keeps the current one")
    }

    @Test func shuffleKeepsTheCurrentSongFirstInTheRange() {
        var queue = Self.queue((0..<10).map { "s\($0)" }, seed: 4)
        queue.makeCurrent(5)
        queue.shuffle(2..<10)
        #expect(queue.entries[2].song == "s5")
        #expect(queue.currentPosition == 2)
        #expect(Set(queue.entries.map(\.song)) == Set((0..<10).map { "s\($0)" }))
        #expect(queue.entries.prefix(2).map(\.song) == ["s0", "s1"], "outside the range nothing moves")
    }

    @Test func playingAChosenSongInRandomModeSkipsNoOtherSong() {
        let songs = (0..<10).map { "s\($0)" }
        for seed: UInt64 in 1...10 {
            var queue = Self.queue(songs, seed: seed)
            queue.makeCurrent(0)
            queue.setRandom(true)
            var heard = ["s0"] + Self.playOn(&queue, limit: 3)
            // The user picks a song not yet heard: it plays next, and every other song still plays after it.
            let unheard = songs.filter { !heard.contains($0) }
            let chosen = unheard[unheard.count / 2]
            queue.makeCurrent(queue.entries.firstIndex { $0.song == chosen })
            heard += [chosen] + Self.playOn(&queue)
            #expect(Set(heard) == Set(songs) && heard.count == songs.count, "seed \(seed): \(heard)")
        }
    }

    @Test func aSongAddedInRandomModeDoesNotDisplaceTheQueuedOne() {
        for seed: UInt64 in 1...20 {
            var queue = Self.queue((0..<8).map { "s\($0)" }, seed: seed)
            queue.makeCurrent(0)
            queue.setRandom(true)
            let queued = queue.nextPosition
            queue.setQueued(queued)
            let queuedSong = queued.map { queue.entries[$0].song }
            queue.insert("new")
            #expect(queue.nextPosition.map { queue.entries[$0].song } == queuedSong, "seed \(seed)")
        }
    }

    // MARK: - As MPD does (review leftovers)

    @Test func stoppingInRandomModeDrawsANewOrderAndKeepsTheCurrentSong() {
        let songs = (0..<12).map { "s\($0)" }
        var queue = Self.queue(songs, seed: 6)
        queue.setRandom(true)
        queue.makeCurrent(queue.firstPosition)
        let unstopped = queue
        queue.stopped()
        #expect(queue.currentPosition == unstopped.currentPosition, "`play` after `stop` plays the same song again")
        // MPD's `Stop` reshuffles: what follows the current song is drawn anew.
        func wholeOrder(_ queue: Queue) -> [String] {
            var queue = queue
            queue.makeCurrent(nil)
            queue.makeCurrent(queue.firstPosition)
            return [queue.entries[queue.currentPosition!].song] + Self.playOn(&queue)
        }
        let after = wholeOrder(queue)
        let before = wholeOrder(unstopped)
        #expect(Set(after) == Set(songs) && after.count == songs.count)
        #expect(after != before, "a new random order after stopping")
    }

    @Test func playWithNoCurrentSongInRandomModeStartsAtARandomSong() {
        var firsts: Set<String> = []
        for seed: UInt64 in 1...10 {
            var queue = Self.queue((0..<12).map { "s\($0)" }, seed: seed)
            queue.setRandom(true)
            #expect(queue.currentPosition == nil)
            firsts.insert(queue.entries[queue.firstPosition!].song)
        }
        #expect(firsts.count > 1, "MPD's `play` starts at the first song of the random order, not the queue's: \(firsts)")
    }

    @Test func turningRandomOnWhileStoppedLeavesNoCurrentSong() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(1)
        queue.setRandom(true, keepingCurrent: false)
        #expect(queue.currentPosition == nil)
        var playing = Self.queue(["a", "b", "c"])
        playing.makeCurrent(1)
        playing.setRandom(true)
        #expect(playing.currentPosition == 1, "while playing, the current song stays, first in the new order")
    }

    @Test func randomWithRepeatStartsEachPassAtARandomSong() {
        let songs = (0..<8).map { "s\($0)" }
        var passStarts: Set<String> = []
        for seed: UInt64 in 1...5 {
            var queue = Self.queue(songs, seed: seed)
            queue.makeCurrent(0)
            queue.setRandom(true)
            queue.setRepeat(true)
            let heard = Self.playOn(&queue, limit: 7 + 8 * 3)
            for pass in stride(from: 7, to: heard.count, by: 8) {
                #expect(Set(heard[pass..<pass + 8]) == Set(songs), "seed \(seed): each pass plays every song once")
                passStarts.insert(heard[pass])
            }
        }
        #expect(passStarts.count > 1, "MPD draws the new order before the wrap-around, so a pass may start anywhere: \(passStarts)")
    }

    @Test func theSongChosenAtTheWrapAroundStaysChosenAndIsTheNextSong() {
        let songs = (0..<8).map { "s\($0)" }
        for seed: UInt64 in 1...10 {
            var queue = Self.queue(songs, seed: seed)
            queue.makeCurrent(0)
            queue.setRandom(true)
            queue.setRepeat(true)
            var heard = Self.playOn(&queue, limit: 7)         // to the last song of the first pass
            // The look-ahead at the wrap-around, chosen again and again as edits and mode changes do.
            let queued = queue.chooseNext()
            #expect(queue.nextPosition == queued, "seed \(seed): `nextsong` names the song queued")
            for _ in 0..<3 { #expect(queue.chooseNext() == queued, "seed \(seed): the draw is kept") }
            heard = Self.playOn(&queue, limit: 8)
            #expect(Set(heard) == Set(songs), "seed \(seed): the second pass plays every song once: \(heard)")
        }
    }

    @Test func singleOneshotWithRepeatRepeatsTheSongAndStaysOn() {
        var queue = Self.queue(["a", "b", "c"])
        queue.makeCurrent(1)
        queue.setSingle(.oneshot)
        queue.setRepeat(true)
        // MPD turns `single oneshot` off only where its player pauses at the border, which repeat prevents.
        #expect(Self.playOn(&queue, limit: 3) == ["b", "b", "b"])
        #expect(queue.single == .oneshot)
        queue.setRepeat(false)
        let changed = queue.songStarted(position: 2)
        #expect(changed, "paused at the border: oneshot ends, an options change")
        #expect(queue.single == .off)
    }

    @Test func aSongAddedInRandomModeAfterTheQueuedOneWasRemovedStillPlays() {
        for seed: UInt64 in 1...20 {
            var queue = Self.queue((0..<6).map { "s\($0)" }, seed: seed)
            queue.makeCurrent(0)
            queue.setRandom(true)
            let queued = queue.chooseNext()!
            queue.remove(queued..<queued + 1)
            queue.insert("new")
            #expect(Self.playOn(&queue).contains("new"), "seed \(seed): the song went before the current one in the order")
        }
    }

    @Test func theLookaheadFollowsEditsOfTheQueue() {
        var queue = Self.queue(["a", "b", "c", "d"])
        queue.makeCurrent(0)
        func chosen() -> String? { queue.chooseNext().map { queue.entries[$0].song } }
        #expect(chosen() == "b")
        queue.move(2..<4, to: 1)                        // a c d b
        #expect(chosen() == "c")
        queue.remove(1..<2)                             // a d b
        #expect(chosen() == "d")
        queue.insert("e", at: 1)                        // a e d b
        #expect(chosen() == "e")
    }
}

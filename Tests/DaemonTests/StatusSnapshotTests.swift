import Dispatch
import MPDProtocol
import QueuePlayer
import TestSupport
import Testing
@testable import DaemonCore

/// ``StatusSnapshot``: when the event loop may answer `status` and `currentsong` with what the
/// controller rendered last, and when it must ask the controller.
@Suite struct StatusSnapshotTests {
    static let stopped = StatusSnapshot.Conditions(item: nil, timeControlStatus: .waitingToPlayAtSpecifiedRate,
                                                   waitingReason: .noItemToPlay)
    static let everyTag = CommandContext()

    static func answer(_ snapshot: StatusSnapshot, _ command: Command, context: CommandContext = everyTag,
                       conditions: StatusSnapshot.Conditions = stopped) -> String? {
        snapshot.answer(command, context: context) { conditions }
    }

    @Test func aStoredReplyIsAnsweredUnderTheSameConditions() {
        let snapshot = StatusSnapshot()
        #expect(Self.answer(snapshot, .status) == nil, "nothing kept yet")
        snapshot.store(.status, "state: stop\n", conditions: Self.stopped, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot, .status) == "state: stop\n")
        #expect(Self.answer(snapshot, .currentsong) == nil, "only what was stored")
        snapshot.store(.currentSong, "file: a.mp3\n", conditions: Self.stopped, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot, .currentsong) == "file: a.mp3\n")
        #expect(Self.answer(snapshot, .status) == "state: stop\n", "storing one reply keeps the other")
        #expect(Self.answer(snapshot, .stats) == nil, "only status and currentsong")
    }

    @Test func anInvalidationDropsTheRepliesAndOneRenderedBeforeItIsNotStored() {
        let snapshot = StatusSnapshot()
        snapshot.store(.status, "state: stop\n", conditions: Self.stopped, epoch: snapshot.epoch)
        let before = snapshot.epoch
        snapshot.invalidate()
        #expect(Self.answer(snapshot, .status) == nil)
        // A reply rendered while something changed (the epoch read before the change).
        snapshot.store(.status, "state: play\n", conditions: Self.stopped, epoch: before)
        #expect(Self.answer(snapshot, .status) == nil)
        snapshot.store(.status, "state: pause\n", conditions: Self.stopped, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot, .status) == "state: pause\n")
    }

    /// The player's current item, time control status and waiting reason change on its own
    /// threads: a reply rendered under others is not used.
    @Test func aChangeOfThePlayersStateIsNotAnsweredFromTheSnapshot() throws {
        let snapshot = StatusSnapshot()
        snapshot.store(.status, "state: stop\n", conditions: Self.stopped, epoch: snapshot.epoch)
        let item = PlayerItem(url: TestMedia.directory.appendingPathComponent("01-morning-sine.mp3"))
        var other = Self.stopped
        other.item = item
        #expect(Self.answer(snapshot, .status, conditions: other) == nil)
        other = Self.stopped
        other.timeControlStatus = .paused
        #expect(Self.answer(snapshot, .status, conditions: other) == nil)
        other = Self.stopped
        other.waitingReason = .outputUnavailable
        #expect(Self.answer(snapshot, .status, conditions: other) == nil)
        // Items compare by identity: another item of the same file is another item.
        var withItem = Self.stopped
        withItem.item = item
        snapshot.store(.status, "state: pause\n", conditions: withItem, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot, .status, conditions: withItem) == "state: pause\n")
        var sameFile = withItem
        sameFile.item = PlayerItem(url: item.url)
        #expect(Self.answer(snapshot, .status, conditions: sameFile) == nil)
    }

    @Test func currentsongIsAnsweredOnlyForAClientWithEveryTagType() {
        let snapshot = StatusSnapshot()
        snapshot.store(.currentSong, "file: a.mp3\nArtist: A\n", conditions: Self.stopped, epoch: snapshot.epoch)
        let fewer = CommandContext(tagTypes: [.artist])
        #expect(Self.answer(snapshot, .currentsong, context: fewer) == nil)
        #expect(Self.answer(snapshot, .currentsong) == "file: a.mp3\nArtist: A\n")
    }

    @Test func aReplyOlderThanTheMaximumAgeIsNotUsed() {
        let snapshot = StatusSnapshot(maximumAge: 20_000_000)
        snapshot.store(.status, "state: stop\n", conditions: Self.stopped, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot, .status) == "state: stop\n")
        #expect(waitUntil(timeout: 5) { Self.answer(snapshot, .status) == nil })
    }
}

/// A `status` kept while playing: the event loop fills in the time the player works out on
/// its thread (``QueuePlayer/audibleTimeWhilePlaying(of:)``), and asks the partition when the
/// player cannot say.
@Suite struct PlayingStatusSnapshotTests {
    static let item = PlayerItem(url: TestMedia.directory.appendingPathComponent("01-morning-sine.mp3"))
    static let playing = StatusSnapshot.Conditions(item: item, timeControlStatus: .playing, waitingReason: nil)
    static let body = "volume: 100\nstate: play\nsong: 0\nsongid: 1\ntime: 1:10\nelapsed: 1.234\nbitrate: 128\nduration: 10.000\naudio: 44100:16:2\n"

    static func answer(_ snapshot: StatusSnapshot, conditions: StatusSnapshot.Conditions = playing,
                       elapsed: @escaping (PlayerItem) -> Double?) -> String? {
        snapshot.answer(.status, context: StatusSnapshotTests.everyTag, conditions: { conditions }, elapsed: elapsed)
    }

    @Test func theTimeIsFilledInFromThePlayer() {
        let snapshot = StatusSnapshot()
        snapshot.storePlaying(status: Self.body, item: Self.item, duration: 10, conditions: Self.playing, epoch: snapshot.epoch)
        var asked: [PlayerItem] = []
        let reply = Self.answer(snapshot) { item in
            asked.append(item)
            return 7.4996
        }
        #expect(reply == "volume: 100\nstate: play\nsong: 0\nsongid: 1\ntime: 7:10\nelapsed: 7.500\nbitrate: 128\nduration: 10.000\naudio: 44100:16:2\n")
        #expect(asked.count == 1 && asked.first === Self.item, "the player is asked for the kept item's time")
    }

    @Test func withoutATimeFromThePlayerThePartitionIsAsked() {
        let snapshot = StatusSnapshot()
        snapshot.storePlaying(status: Self.body, item: Self.item, duration: 10, conditions: Self.playing, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot) { _ in nil } == nil)
        var paused = Self.playing
        paused.timeControlStatus = .paused
        #expect(Self.answer(snapshot, conditions: paused) { _ in 1 } == nil, "the player paused since")
        snapshot.invalidate()
        #expect(Self.answer(snapshot) { _ in 1 } == nil, "something changed since")
    }

    @Test func aStatusWithoutItsTimeLinesIsNotKept() {
        let snapshot = StatusSnapshot()
        snapshot.storePlaying(status: "state: play\nelapsed: 1.000\n", item: Self.item, duration: 10,
                              conditions: Self.playing, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot) { _ in 1 } == nil)
        // `time:` must start a line: `mixrampdelay: ...` or a value containing it does not count.
        snapshot.storePlaying(status: "xtime: 1:2\nelapsed: 1.000\n", item: Self.item, duration: 10,
                              conditions: Self.playing, epoch: snapshot.epoch)
        #expect(Self.answer(snapshot) { _ in 1 } == nil)
        let stale = snapshot.epoch
        snapshot.invalidate()
        snapshot.storePlaying(status: Self.body, item: Self.item, duration: 10, conditions: Self.playing, epoch: stale)
        #expect(Self.answer(snapshot) { _ in 1 } == nil, "rendered before a change")
    }
}

/// ``ControlEvents`` makes the kept replies stale the moment a change is posted, not when
/// the idle replies go out on the controller's queue (a client may ask in between).
@Suite struct ControlEventsSnapshotTests {
    @Test(arguments: [false, true])
    func aPostedChangeDropsTheKeptRepliesAtOnce(toSomeClients: Bool) {
        let queue = DispatchQueue(label: "test.controller")
        queue.suspend()  // nothing posted is delivered during the test
        defer { queue.resume() }
        let events = ControlEvents(queue: queue)
        let snapshot = events.statusSnapshot
        snapshot.store(.status, "state: stop\n", conditions: StatusSnapshotTests.stopped, epoch: snapshot.epoch)
        #expect(StatusSnapshotTests.answer(snapshot, .status) == "state: stop\n")
        if toSomeClients { events.post([.message], toClients: [1]) } else { events.post([.playlist]) }
        #expect(StatusSnapshotTests.answer(snapshot, .status) == nil)
    }
}

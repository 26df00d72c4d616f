import Foundation
import Logging
import MPDProtocol
import QueuePlayer
import Testing
import TestSupport
@testable import DaemonCore

/// `stats`' `playtime` and `uptime` as mpd counts them: the time actually played since the
/// start (across items, not counting pauses, stops or what a seek jumps over), and the time
/// since the start. A real partition and player on a null sink paced by a virtual clock.
@Suite struct PlayTimeTests {
    @Test func theMeterAddsUpTheStretchesOfPlaying() {
        var meter = PlayTimeMeter()
        #expect(meter.seconds(at: 5_000_000_000) == 0)
        meter.update(isPlaying: true, at: 1_000_000_000)
        meter.update(isPlaying: true, at: 2_000_000_000)  // a repeat changes nothing
        #expect(meter.seconds(at: 3_500_000_000) == 2.5)
        meter.update(isPlaying: false, at: 4_000_000_000)
        meter.update(isPlaying: false, at: 5_000_000_000)
        #expect(meter.seconds(at: 9_000_000_000) == 3)
        meter.update(isPlaying: true, at: 10_000_000_000)
        #expect(meter.seconds(at: 10_250_000_000) == 3.25)
    }

    final class Fixture {
        let clock = VirtualClock()
        let partition: Partition
        let directory: URL

        init() throws {
            directory = try TestMedia.scratchDirectory()
            let queue = DispatchQueue(label: "test.partition")
            let player = QueuePlayer(sink: NullAudioSink(clock: clock))
            partition = Partition(queue: queue, player: player, library: MusicLibrary(root: TestMedia.directory),
                                  events: ControlEvents(queue: queue),
                                  outputs: AudioOutputs(outputs: [.init(name: "null", plugin: "null")], switch: nil),
                                  stateDirectory: directory, logger: Logger(label: "test"))
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// One command line through a session, run on the partition's queue; the reply's text.
        func send(_ line: String) async -> String {
            await partition.run { partition in
                var session = ClientSession()
                return session.receive(Array((line + "\n").utf8), executor: partition).map { action in
                    if case .send(let text) = action { return text }
                    return ""
                }.joined()
            }
        }

        /// `stats`' value for `key`.
        func stat(_ key: String) async -> Int? {
            let reply = await send("stats")
            return reply.split(separator: "\n").first { $0.hasPrefix("\(key): ") }.flatMap { Int($0.dropFirst(key.count + 2)) }
        }

        func played() async -> Double { await partition.run { $0.playedSeconds } }

        /// Waits (without moving time) until the player is in `status`.
        func waitFor(_ status: QueuePlayer.TimeControlStatus) -> Bool {
            waitUntil(timeout: 10) { partition.player.timeControlStatus == status }
        }
    }

    @Test func playtimeIsTheTimePlayedAcrossItemsPausesSeeksAndStopsAndUptimeTheTimeSinceTheStart() async throws {
        let fixture = try Fixture()
        let clock = fixture.clock
        #expect(await fixture.send("add \"01-morning-sine.mp3\"") == "OK\n")
        #expect(await fixture.send("add \"02-evening-triangle.mp3\"") == "OK\n")
        #expect(await fixture.stat("playtime") == 0)

        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        clock.advance(bySeconds: 2.5)
        #expect(abs(await fixture.played() - 2.5) < 0.01)
        #expect(await fixture.stat("playtime") == 2)

        // Paused: nothing counts.
        #expect(await fixture.send("pause 1") == "OK\n")
        #expect(fixture.waitFor(.paused))
        clock.advance(bySeconds: 5)
        #expect(abs(await fixture.played() - 2.5) < 0.01)

        // A seek back counts what was played, not where the song is.
        #expect(await fixture.send("pause 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        clock.advance(bySeconds: 1)
        #expect(await fixture.send("seekcur 0") == "OK\n")
        clock.advance(bySeconds: 1)
        #expect(abs(await fixture.played() - 4.5) < 0.01)
        #expect(await fixture.stat("playtime") == 4)

        // The next item adds to it.
        #expect(await fixture.send("next") == "OK\n")
        clock.advance(bySeconds: 1)
        #expect(abs(await fixture.played() - 5.5) < 0.01)

        // Stopped: nothing counts; the time since the start does.
        #expect(await fixture.send("stop") == "OK\n")
        #expect(fixture.waitFor(.paused))
        clock.advance(bySeconds: 3)
        #expect(abs(await fixture.played() - 5.5) < 0.01)
        #expect(await fixture.stat("playtime") == 5)
        #expect(await fixture.stat("uptime") == 13)
        await fixture.partition.run { $0.player.close() }
    }
}

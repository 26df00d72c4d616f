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

    @Test func playtimeIsTheTimePlayedAcrossItemsPausesSeeksAndStopsAndUptimeTheTimeSinceTheStart() async throws {
        let fixture = try PartitionFixture()
        let clock = fixture.clock
        #expect(await fixture.send("add \"01-morning-sine.mp3\"") == "OK\n")
        #expect(await fixture.send("add \"02-evening-triangle.mp3\"") == "OK\n")
        #expect(await fixture.value(of: "playtime", in: "stats") == "0")

        #expect(await fixture.send("play 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        clock.advance(bySeconds: 2.5)
        #expect(abs(await fixture.partition.run { $0.playedSeconds } - 2.5) < 0.01)
        #expect(await fixture.value(of: "playtime", in: "stats") == "2")

        // Paused: nothing counts.
        #expect(await fixture.send("pause 1") == "OK\n")
        #expect(fixture.waitFor(.paused))
        clock.advance(bySeconds: 5)
        #expect(abs(await fixture.partition.run { $0.playedSeconds } - 2.5) < 0.01)

        // A seek back counts what was played, not where the song is.
        #expect(await fixture.send("pause 0") == "OK\n")
        #expect(fixture.waitFor(.playing))
        clock.advance(bySeconds: 1)
        #expect(await fixture.send("seekcur 0") == "OK\n")
        clock.advance(bySeconds: 1)
        #expect(abs(await fixture.partition.run { $0.playedSeconds } - 4.5) < 0.01)
        #expect(await fixture.value(of: "playtime", in: "stats") == "4")

        // The next item adds to it.
        #expect(await fixture.send("next") == "OK\n")
        clock.advance(bySeconds: 1)
        #expect(abs(await fixture.partition.run { $0.playedSeconds } - 5.5) < 0.01)

        // Stopped: nothing counts; the time since the start does.
        #expect(await fixture.send("stop") == "OK\n")
        #expect(fixture.waitFor(.paused))
        clock.advance(bySeconds: 3)
        #expect(abs(await fixture.partition.run { $0.playedSeconds } - 5.5) < 0.01)
        #expect(await fixture.value(of: "playtime", in: "stats") == "5")
        #expect(await fixture.value(of: "uptime", in: "stats") == "13")
        await fixture.partition.run { $0.player.close() }
    }
}

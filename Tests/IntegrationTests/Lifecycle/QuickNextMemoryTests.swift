import Foundation
import TestSupport
import Testing

/// Skipping through a queue quickly (a client holding `next` down) must not make the daemon
/// grow: what each skipped item opened is released, through ALSA's pulse plugin as well.
@Suite(.serialized) struct QuickNextMemoryTests {
    @Test func twoThousandQuickNextsThroughPulseAudioLeaveTheResidentSizeWhereItWas() throws {
        let pulse = try PulseServer()
        defer { pulse.stop() }
        let media = TestMedia.stereo
        try #require(media.count >= 3)
        let queue = (0..<4).flatMap { _ in media.prefix(3).map(\.path) }
        let daemon = try LifecycleDaemon(["--output", "alsa:pulsenull", "--no-state"] + queue,
                                         environment: ["ALSA_CONFIG_PATH": pulse.alsaConfigPath])
        try #require(try daemon.waitForStatus(timeout: 10) { $0["state"] == "play" }["state"] == "play")
        let client = try UnixSocketClient.connect(path: daemon.socket)
        _ = try client.readLine()

        /// `count` nexts as fast as they are answered, starting over before the queue's end.
        func skip(_ count: Int) throws {
            for index in 0..<count {
                let command = index % 10 == 9 ? "play 0" : "next"
                let reply = try client.request(command)
                try #require(reply.last == "OK", "\(command): \(reply)")
            }
        }
        try skip(300)    // warm-up: the allocator's arenas and alsa-lib's and libpulse's caches fill
        let start = try #require(daemon.residentKilobytes)
        try skip(2_000)
        let end = try #require(daemon.residentKilobytes)
        print("quick nexts: resident \(start) kB after the warm-up, \(end) kB after 2,000 more (\(end - start) kB)")
        #expect(end - start <= 5 * 1024, "2,000 nexts grew the daemon by \(end - start) kB")
        let status = try daemon.waitForStatus(timeout: 5) { $0["state"] == "play" && $0.elapsedSeconds > 0 }
        #expect(status["state"] == "play" && status.elapsedSeconds > 0, "it still plays: \(status)")
        #expect(daemon.process.isRunning)
    }
}

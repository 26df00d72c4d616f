import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that send a lot hold no thread that others need, and leave the other clients'
/// `status` fast. (What they cost the daemon's process in CPU and memory: IntegrationTests'
/// suite of the same name.)
///
/// Latency bounds are on the 95th percentile of many `status` round trips of a separate
/// client, sampled every 5 ms during the load: an idle daemon answers in about 1 ms, so
/// 50 ms leaves a margin of scheduler noise on a loaded 2-core machine, and the percentile
/// tolerates a few preempted samples; the defects these tests guard against stalled every
/// sample taken during the load (for hundreds of milliseconds). Where the load is other
/// clients' commands that each take longer than that (a long `playlistinfo` in a debug
/// build), the bound is on the median, and the worst round trip is bounded by one of them.
@Suite(.serialized) struct ControlSocketLoadTests {
    static let latencyBound = 0.050

    /// `command_list_begin`, 65,536 × `ping`, `command_list_end`: collecting the list used to
    /// copy it once per line (6.8 s at 32k lines, 25 s at 64k), all on the event loop.
    @Test func aListOf64kPingsIsAnsweredFastAndOtherClientsStayFast() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let probe = try StatusProbe(socket: daemon.socket)
        let pinger = try daemon.client()
        let list = Array(("command_list_begin\n" + String(repeating: "ping\n", count: 65_536) + "command_list_end\n").utf8)

        // At least three lists, and as many more as it takes for the probe to have sampled 40
        // round trips under the load: a fast daemon answers a list in tens of milliseconds,
        // and a loaded machine may schedule the probe rarely meanwhile; the sample count
        // must not depend on either.
        var durations: [Double] = []
        let loadDeadline = ChildProcess.now() + 60
        while durations.count < 3 || (probe.count < 40 && ChildProcess.now() < loadDeadline) {
            let start = ChildProcess.now()
            let sent = pinger.sendAvailable(list, timeout: 10)
            try #require(sent.count == list.count, "sent \(sent.count) of \(list.count) bytes")
            let reply = try pinger.readReply(timeout: 30)
            durations.append(ChildProcess.now() - start)
            try #require(reply == ["OK"], "reply \(reply.prefix(3))")
        }
        #expect(try pinger.request("ping") == ["OK"])
        let result = probe.finish()
        let median = durations.sorted()[durations.count / 2]
        print("64k-ping lists answered in \(durations.map { String(format: "%.3f s", $0) }); \(result)")
        #expect(median < 0.5, "64k pings in a list: \(durations) s")
        #expect(result.failures.isEmpty && result.seconds.count >= 40, "\(result)")
        #expect(result.p95 < Self.latencyBound, "\(result)")
        #expect(daemon.isRunning, "stderr: \(daemon.standardError)")
    }

    /// While one client's slow command runs (`playlistinfo` of 6,000 songs, about half a
    /// second in a debug build), another client's `ping`s are answered: the daemon's commands
    /// run on the controller's queue, not on the event loop every client shares.
    @Test func aSlowCommandHoldsNoOtherClient() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        let slow = try daemon.client()
        try slow.send("command_list_begin\n" + String(repeating: "add \"01-morning-sine.mp3\"\n", count: 6000) + "command_list_end\n",
                      timeout: 10)
        try #require(try slow.readReply(timeout: 60) == ["OK"])
        let pinger = try daemon.client()
        #expect(try pinger.request("ping") == ["OK"])

        try slow.send("playlistinfo\n")
        let sentAt = ChildProcess.now()
        var roundTrips: [Double] = []
        var replyStarted = false
        while !replyStarted && ChildProcess.now() - sentAt < 30 {
            let start = ChildProcess.now()
            let reply = try pinger.request("ping", timeout: 30)
            roundTrips.append(ChildProcess.now() - start)
            try #require(reply == ["OK"])
            var ready = pollfd(fd: slow.fileDescriptor, events: Int16(POLLIN), revents: 0)
            replyStarted = poll(&ready, 1, 0) == 1
        }
        let slowSeconds = ChildProcess.now() - sentAt
        let listing = try RawReplies.read(slow, timeout: 30) { $0.count >= 4 && $0.suffix(4).elementsEqual("\nOK\n".utf8) }
        let sorted = roundTrips.sorted()
        let p95 = sorted[min(sorted.count - 1, Int((0.95 * Double(sorted.count)).rounded(.up)) - 1)]
        print("playlistinfo of 6000 songs (\(listing.count) bytes) took about \(String(format: "%.3f", slowSeconds)) s; meanwhile \(roundTrips.count) pings, p95 \(String(format: "%.1f", p95 * 1000)) ms, max \(String(format: "%.1f", (sorted.last ?? 0) * 1000)) ms")

        #expect(roundTrips.count >= 10, "only \(roundTrips.count) pings were answered while the slow command ran (\(slowSeconds) s)")
        #expect(p95 < Self.latencyBound, "ping round trips while another client's command ran: \(sorted.suffix(5))")
        #expect(listing.count > 6000 * 100, "the slow client's reply: \(listing.count) bytes")
    }
}

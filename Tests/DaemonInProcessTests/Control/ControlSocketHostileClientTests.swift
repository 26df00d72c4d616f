import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Clients that misbehave must neither disturb playback nor the other clients.
@Suite(.serialized) struct ControlSocketHostileClientTests {
    /// A well-behaved client's `status` round trip (connected already): send, read to `OK`.
    struct RoundTrip { let phase: String; let index: Int; let seconds: Double; let reply: [String] }

    @Test func hostileClientsDisturbNeitherPlaybackNorOtherClients() throws {
        let daemon = try InProcessDaemon { $0.media = TestMedia.directory.path }
        defer { daemon.stop() }
        let good = try daemon.client()
        var first: [String] = []
        let deadline = ChildProcess.now() + 3
        repeat {
            first = try good.request("status")
            if replyValue(first, "state") == "play" { break }
            usleep(20_000)
        } while ChildProcess.now() < deadline
        try #require(replyValue(first, "state") == "play", "status: \(first)")
        let firstAt = ChildProcess.now()
        let firstElapsed = try #require(replyValue(first, "elapsed").flatMap(Double.init), "status: \(first)")

        var roundTrips: [RoundTrip] = []
        func measure(_ phase: String, count: Int = 5) throws {
            for index in 0..<count {
                let start = ChildProcess.now()
                let reply = try good.request("status", timeout: 2)
                roundTrips.append(RoundTrip(phase: phase, index: index + 1, seconds: ChildProcess.now() - start, reply: reply))
                usleep(10_000)
            }
        }
        try measure("before")

        // 100 connections opened and dropped: half at once, half after reading the greeting.
        for index in 0..<100 {
            let client = try UnixSocketClient(path: daemon.socket)
            if index % 2 == 1 { _ = try? client.readLine(timeout: 1) }
            client.close()
        }
        try measure("after 100 dropped connections")

        // A 1 MiB line. mpd closes such a connection (its input buffer is full); the daemon
        // must close it or refuse it with an ACK, and never run it.
        let long = try daemon.client()
        let line = Array("status ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + [UInt8(ascii: "\n")]
        let sent = long.sendAvailable(line, timeout: 3)
        try measure("after a 1 MiB line")
        let longEnd = long.waitForEndOfFile(timeout: 2)
        let longReply = String(decoding: longEnd.received, as: UTF8.self)
        #expect(longEnd.closed || longReply.hasPrefix("ACK "),
                "1 MiB line (\(sent.count) bytes sent): closed \(longEnd.closed), reply \(longReply.prefix(200).debugDescription)")
        #expect(!longReply.contains("OK\n"), "the 1 MiB line must not be run: \(longReply.prefix(200).debugDescription)")
        long.close()

        // Random bytes (newlines and NULs included), then the client goes away.
        var generator = SplitMix64(seed: 0x5EED)
        let noise = (0..<(256 * 1024)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let random = try UnixSocketClient(path: daemon.socket)
        random.sendAvailable(noise, timeout: 2)
        try measure("after random bytes")
        random.close()

        // 10,000 `status` commands from a client that never reads the replies.
        let flood = try daemon.client()
        let commands = [UInt8](String(repeating: "status\n", count: 10_000).utf8)
        let flooded = flood.sendAvailable(commands, timeout: 2)
        try measure("while a client ignores 10,000 status replies", count: 20)
        usleep(500_000)
        try measure("0.5 s later, the flooding client still connected", count: 10)
        flood.close()
        try measure("after the flooding client left")

        // Playback went on in real time all along.
        let last = try good.request("status")
        let lastAt = ChildProcess.now()
        let lastElapsed = try #require(replyValue(last, "elapsed").flatMap(Double.init), "status: \(last)")
        #expect(replyValue(last, "state") == "play" && replyValue(last, "song") == "0", "status: \(last)")
        let wall = lastAt - firstAt
        #expect(abs((lastElapsed - firstElapsed) - wall) < 0.3,
                "elapsed went \(firstElapsed) → \(lastElapsed) in \(wall) s of wall time")

        for trip in roundTrips {
            #expect(trip.reply.last == "OK" && replyValue(trip.reply, "state") == "play", "\(trip.phase): \(trip.reply)")
        }
        let slowRoundTrips = roundTrips.filter { $0.seconds >= 0.050 }
            .map { "\($0.phase), round trip \($0.index): \(Int($0.seconds * 1000)) ms" }
        #expect(slowRoundTrips == [], "every status round trip must take less than 50 ms (flood sent \(flooded.count) of \(commands.count) bytes)")
        let worst = roundTrips.map(\.seconds).max() ?? 0
        print("status round trips: \(roundTrips.count), worst \(String(format: "%.1f", worst * 1000)) ms; flood sent \(flooded.count)/\(commands.count) bytes; 1 MiB line sent \(sent.count) bytes")
        #expect(!daemon.standardError.lowercased().contains("underrun"), "stderr: \(daemon.standardError)")
        #expect(daemon.isRunning, "stderr: \(daemon.standardError)")
    }

    /// Malformed lines close the connection silently; errors are ACKs that keep it open
    /// (fact sheet §1–3, transcript 34).
    @Test func malformedLinesCloseSilentlyAndErrorsAreACKs() throws {
        let daemon = try InProcessDaemon { $0.musicDirectory = TestMedia.directory.path }
        defer { daemon.stop() }
        for line in ["\n", "STATUS\n", "Ping\n", "   \n", "close\n"] {
            let client = try daemon.client()
            try client.send(line)
            let end = client.waitForEndOfFile(timeout: 2)
            #expect(end.closed, "\(line.debugDescription) must close the connection")
            #expect(end.received.isEmpty, "\(line.debugDescription) got \(String(decoding: end.received, as: UTF8.self).debugDescription)")
        }

        let client = try daemon.client()
        #expect(try client.request("frobnicate") == [#"ACK [5@0] {} unknown command "frobnicate""#])
        #expect(try client.request("frobnicate with args") == [#"ACK [5@0] {} unknown command "frobnicate""#])
        #expect(try client.request("ping") == ["OK"], "the connection stays open after an ACK")
        #expect(try client.request("play 99") == ["ACK [2@0] {play} Bad song index"])
        #expect(try client.request("play abc") == ["ACK [2@0] {play} Integer expected: abc"])
        #expect(try client.request("status extra") == [#"ACK [2@0] {status} wrong number of arguments for "status""#])
        #expect(try client.request("add \"01-morning-sine.mp3") == [#"ACK [5@0] {} Missing closing '"'"#])
        #expect(try client.request("ping\r") == ["OK"], "a trailing CR is tolerated")
        // Pipelined: several commands in one write, one reply each, in order.
        try client.send("ping\nstatus\nping\n")
        #expect(try client.readReply() == ["OK"])
        #expect(try client.readReply().last == "OK")
        #expect(try client.readReply() == ["OK"])
        // Command lists stop at the first error; ok-mode lists say list_OK per command.
        try client.send("command_list_begin\nping\nfrobnicate\nping\ncommand_list_end\n")
        #expect(try client.readReply() == [#"ACK [5@1] {} unknown command "frobnicate""#])
        try client.send("command_list_ok_begin\nping\nplay 99\nping\ncommand_list_end\n")
        #expect(try client.readReply() == ["list_OK", "ACK [2@1] {play} Bad song index"])
        try client.send("command_list_ok_begin\nping\nping\ncommand_list_end\n")
        #expect(try client.readReply() == ["list_OK", "list_OK", "OK"])
        #expect(try client.request("command_list_end") == [#"ACK [5@0] {} unknown command "command_list_end""#])
        #expect(try client.request("ping") == ["OK"])
    }
}

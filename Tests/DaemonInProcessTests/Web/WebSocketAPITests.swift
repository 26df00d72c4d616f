import DaemonCore
import Foundation
import MPDProtocol
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The WebSocket API (docs/websocket.md) against the daemon in process, with a real
/// client: Python's `websockets` (`Tests/IntegrationTests/Scripts/ws_api.py`).
@Suite(.serialized) struct WebSocketAPITests {
    @Test func commandsAnswerAsTheSocketDoesAndErrorsLeaveTheConnectionUsable() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("commands")
        let status = steps.ok("status") as? [String: Any] ?? [:]
        #expect(status["state"] as? String == "play")
        #expect(status["volume"] as? Int == 100)
        #expect(status["playlistlength"] as? Int == 4)
        #expect(status["elapsed"] is Double || status["elapsed"] is Int)
        let queue = steps.ok("playlistinfo") as? [[String: Any]] ?? []
        #expect(queue.count == 4)
        let titles: [String] = queue.compactMap { $0["Title"] as? String }
        #expect(titles == ControlSocketExpectations.media.map(\.title))
        #expect(queue.allSatisfy { $0["Id"] is Int && $0["Pos"] is Int })
        let outputs = steps.ok("outputs") as? [[String: Any]] ?? []
        #expect(outputs.count == 1 && outputs.first?["outputenabled"] as? Int == 1)
        let commands = steps.ok("commands") as? [String] ?? []
        #expect(commands.contains("play") && commands.contains("status"))
        #expect((steps.ok("currentsong") as? [String: Any])?["Title"] as? String == ControlSocketExpectations.media[0].title)
        #expect(steps.object("string id")["id"] as? Int != nil)

        let noSuchSong = steps.error("no such song")
        #expect(noSuchSong["ack"] as? Int == 50 && noSuchSong["command"] as? String == "playid")
        #expect(steps.error("unknown command")["ack"] as? Int == 5)
        #expect(steps.error("idle refused")["command"] as? String == "idle")
        // A WebSocket client is not on this machine's Unix socket: `config` is refused as mpd
        // refuses it to a TCP client.
        let config = steps.error("config refused")
        #expect(config["ack"] as? Int == 4 && config["command"] as? String == "config", "\(config)")
        #expect((config["message"] as? String) == "Command only permitted to local clients", "\(config)")
        for step in ["bad json", "not an object", "unknown request", "interval too short", "interval too long",
                     "interval not a number", "interval boolean", "bad boundary", "unknown subscription", "multi-line command",
                     "binary message"] {
            _ = steps.error(step)
        }
        #expect(steps.object("bad json")["id"] == nil)
        #expect(steps.object("interval too short")["id"] as? Int != nil, "the id is echoed in a refusal")
        #expect((steps.ok("still usable") as? [String: Any])?["state"] as? String == "play")
    }

    /// One message is one command line: a CR or LF inside `command` (a CRLF pair too, which
    /// Swift counts as one character) is refused, and nothing of the line runs.
    @Test func aCommandWithALineBreakInsideIsRefusedAndRunsNothing() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("line-breaks")
        #expect(steps["volume before"] as? Int == 100)
        for step in ["crlf", "cr", "lf", "crlf idle", "crlf list", "crlf close"] {
            let error = steps.error(step)
            #expect(error["ack"] as? Int == 2, "\(step): \(error)")
            #expect((error["message"] as? String ?? "").contains("no CR or LF"), "\(step): \(error)")
        }
        #expect(steps["volume after"] as? Int == 100, "no setvol ran")
        #expect(steps.ok("still usable") != nil)
    }

    @Test func severalSubscriptionsEachAtItsIntervalAndOneEndsAlone() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("two-subscriptions")
        let counts = steps.object("counts")
        let fast = counts["fast"] as? Int ?? 0
        let slow = counts["slow"] as? Int ?? 0
        #expect((32...44).contains(fast), "2 s at 50 ms: \(fast)")
        #expect((8...12).contains(slow), "2 s at 200 ms: \(slow)")
        _ = steps.ok("unsubscribe one")
        let left = steps["left"] as? [Int] ?? []
        #expect(left.count == 2 && left[0] * 1000 == left[1], "only the slow subscription is left: \(left)")
    }

    @Test func nothingIsPushedWhilePaused() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("pause")
        #expect((steps["before"] as? Int ?? 0) >= 6)
        #expect(steps["while paused"] as? Int == 0)
        #expect((steps.object("resumed"))["state"] as? String == "play")
    }

    /// `rate`, `pitchalgorithm` and `skipsilence` over the WebSocket: `idle` `options` reaches
    /// another client, `status` shows them (the rate and skip silence as numbers), a bad rate
    /// is mpd's ACK as fields, and the time pushed is the item's: at 2x `elapsed` moves on about
    /// 2 s a second of arrival time (margins for a loaded machine; 1x would fail).
    @Test func theRateIsSetShownAndTheTimePushedIsItemTime() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("pace")
        #expect(steps.ok("rate") as? [String: Any] != nil)
        #expect((steps["idle options"] as? [String: Any])?["changed"] as? [String] == ["options"])
        let status = steps.ok("status") as? [String: Any] ?? [:]
        #expect(status["rate"] as? Int == 2 && status["pitchalgorithm"] as? String == "timeDomain"
                && status["skipsilence"] as? Int == 0, "\(status)")
        let bad = steps.error("bad rate")
        #expect(bad["ack"] as? Int == 2 && bad["command"] as? String == "rate"
                && bad["message"] as? String == "Expected a rate from 0.5 to 3.0: abc", "\(bad)")
        let after = steps.ok("status after") as? [String: Any] ?? [:]
        #expect(after["rate"] as? Int == 2 && after["pitchalgorithm"] as? String == "varispeed"
                && after["skipsilence"] as? Int == 1 && after["silenceskipped"] != nil, "\(after)")
        let ticks = (steps["ticks"] as? [[Any]] ?? []).compactMap { tick -> (at: Double, elapsed: Double, song: Int)? in
            guard tick.count == 3, let at = tick[0] as? Double, let song = tick[2] as? Int else { return nil }
            return (at, (tick[1] as? Double) ?? Double(tick[1] as? Int ?? -1), song)
        }
        let same = ticks.filter { $0.song == ticks.first?.song }
        try #require(same.count >= 8, "ticks: \(ticks)")
        let first = same[0], last = same[same.count - 1]
        let ratio = (last.elapsed - first.elapsed) / (last.at - first.at)
        #expect(ratio > 1.6 && ratio < 2.4, "elapsed moved \(last.elapsed - first.elapsed) s in \(last.at - first.at) s: \(ratio)x")
    }

    @Test func boundariesArePushedAsTheyAreCrossed() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("boundary")
        _ = steps.ok("subscribed")
        let pushes = steps["pushes"] as? [[String: Any]] ?? []
        let times: [Double] = pushes.compactMap { $0["time"] as? Double }
        #expect(times == [1.6, 2.2], "\(pushes)")
        #expect(pushes.allSatisfy { $0["songid"] is Int })
        _ = steps.ok("unsubscribe")
    }

    @Test func everyClientHearsTheIdleEventsTheCurrentItemAndItsMessages() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("events")
        let song = steps.object("currentItem")["song"] as? [String: Any] ?? [:]
        #expect(song["Title"] as? String == ControlSocketExpectations.media[1].title)
        #expect(song["Id"] is Int)
        #expect(steps.object("idle player")["changed"] as? [String] != nil)
        #expect((steps.object("idle mixer")["changed"] as? [String] ?? []).contains("mixer"))
        #expect((steps.object("idle message")["changed"] as? [String] ?? []).contains("message"))
        let messages = steps.ok("readmessages") as? [[String: Any]] ?? []
        #expect(messages.first?["channel"] as? String == "news" && messages.first?["message"] as? String == "hello")
    }

    /// The sleep timer over the WebSocket: set (another client hears `idle options`), shown in
    /// `status` as a string, refused with an ACK's fields, cancelled; `inprogress` answers a list.
    @Test func theSleepTimerAndTheItemsInProgress() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("sleep")
        #expect(steps.ok("sleep set") as? [String: Any] != nil)
        #expect((steps.object("idle options")["changed"] as? [String] ?? []).contains("options"))
        let sleeping = steps.ok("status sleeping") as? [String: Any] ?? [:]
        #expect(sleeping["sleep"] as? String == "1800" || sleeping["sleep"] as? String == "1799", "\(sleeping)")
        let refused = steps.error("sleep refused")
        #expect(refused["ack"] as? Int == 2 && refused["command"] as? String == "sleep", "\(refused)")
        #expect((refused["message"] as? String ?? "").hasPrefix("Negative time: -5"), "\(refused)")
        #expect(steps.ok("sleep off") as? [String: Any] != nil)
        #expect((steps.ok("status awake") as? [String: Any] ?? [:])["sleep"] == nil)
        #expect(steps.ok("inprogress") as? [Any] != nil)
    }

    /// The control socket's passwords hold on the WebSocket too: with `--default-permissions ""`
    /// a client may do nothing that needs a permission, and is pushed nothing, until it gives one.
    @Test func aClientWithoutReadIsRefusedAndPushedNothingUntilItsPassword() throws {
        let daemon = try InProcessWebDaemon {
            $0.passwords = [try PasswordSetting.parse("s3cret@read,add,player,control,admin")]
            $0.defaultPermissions = try Permission.parse("")
        }
        defer { daemon.stop() }
        let steps = try daemon.run("permissions", ["s3cret"])
        let refused = steps.error("status refused")
        #expect(refused["ack"] as? Int == 4 && refused["command"] as? String == "status", "\(refused)")
        let subscribe = steps.error("subscribe refused")
        #expect(subscribe["ack"] as? Int == 4 && subscribe["command"] as? String == "subscribe", "\(subscribe)")
        _ = steps.ok("ping")
        _ = steps.ok("b password")
        #expect((steps.ok("b status") as? [String: Any])?["state"] != nil)
        #expect(steps.object("b idle")["changed"] as? [String] != nil, "the client with the password hears the player")
        #expect(steps.error("wrong password")["ack"] as? Int == 3)
        _ = steps.ok("a password")
        let early = steps["a events before its password"] as? [Any]
        #expect(early?.isEmpty == true, "pushed without read: \(String(describing: early))")
        _ = steps.ok("a subscribe")
        #expect(steps.object("a idle")["changed"] as? [String] != nil, "once it has read, it hears the player")
        #expect(steps.object("a tick")["elapsed"] is Double)
    }

    /// Guesses over the WebSocket count as the control socket's: past three failures the answer
    /// to a wrong password comes only after the wait (the client's task waits, nothing else),
    /// and the right password is never refused: another client from the same loopback address
    /// gives it meanwhile, the guesser afterwards.
    @Test func aGuessersWrongAnswerIsHeldBackAndTheRightPasswordIsNeverRefused() throws {
        let daemon = try InProcessWebDaemon {
            $0.passwords = [try PasswordSetting.parse("s3cret@read,add,player,control,admin")]
            $0.defaultPermissions = try Permission.parse("")
        }
        defer { daemon.stop() }
        let steps = try daemon.run("guessing", ["s3cret"])
        for attempt in 1...3 { #expect(steps.error("guess \(attempt)")["ack"] as? Int == 3, "guess \(attempt)") }
        _ = steps.ok("owner password")
        #expect(steps.error("guess 4")["ack"] as? Int == 3)
        let heldFor = try #require(steps["guess 4 answered after"] as? Double)
        #expect(heldFor >= 0.9, "the fourth wrong answer came \(heldFor) s after it was sent")
        _ = steps.ok("guesser password")
        #expect(daemon.standardError.contains("(4 failed attempts; answered after 1 s)"))
    }

    /// What a client is sent on connecting (the downloads' counts, with a music directory) comes
    /// once a password lets it read.
    @Test func aClientThatMayReadOnlyAfterItsPasswordIsThenSentWhatItMissedOnConnecting() throws {
        let daemon = try InProcessWebDaemon {
            $0.passwords = [try PasswordSetting.parse("s3cret@read,add,player,control,admin")]
            $0.defaultPermissions = try Permission.parse("")
            $0.media = nil
            $0.musicDirectory = TestMedia.directory.path
        }
        defer { daemon.stop() }
        let steps = try daemon.run("late-read", ["s3cret"])
        #expect(steps.error("status refused")["ack"] as? Int == 4)
        _ = steps.ok("password")
        let before = steps["before the password"] as? [[String: Any]]
        #expect(before?.contains { $0["event"] as? String == "downloads" } == false, "\(String(describing: before))")
        #expect(steps.object("downloads after the password")["active"] as? Int == 0)
    }

    @Test func anotherSitesPageAndAReboundHostAreRefused() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("origin")
        #expect(steps.object("no origin")["accepted"] != nil)
        #expect(steps.object("own origin")["accepted"] != nil)
        #expect(steps.object("other origin")["refused"] as? Int == 403)
        #expect(steps.object("other port")["refused"] as? Int == 403)
        #expect(steps.object("rebound host")["refused"] as? Int == 403)
        #expect(steps["page"] as? Int == 200)
        #expect(steps["script"] as? Int == 200)
        #expect(steps["elsewhere"] as? Int == 404)
        #expect(steps["rebound page"] as? Int == 403)
        let headers = steps.object("headers")
        #expect((headers["content-security-policy"] as? String ?? "").contains("default-src 'none'"))
        #expect(headers["x-content-type-options"] as? String == "nosniff")
    }

    @Test func aTokenIsCheckedOnEveryRequestAndUpgrade() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("token")
        try "s3cret-token-0123456789\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let daemon = try InProcessWebDaemon { $0.httpTokenFile = tokenFile.path }
        defer { daemon.stop() }
        let steps = try daemon.run("token", ["s3cret-token-0123456789"])
        // 401, as for the page: no credentials, or wrong ones.
        #expect(steps.object("no token")["refused"] as? Int == 401)
        #expect(steps.object("wrong token")["refused"] as? Int == 401)
        #expect(steps.object("query token")["accepted"] != nil)
        #expect(steps.object("bearer token")["accepted"] != nil)
        #expect(steps.object("cookie token")["accepted"] != nil)
        #expect(steps["page without"] as? Int == 401)
        let page = steps["page with"] as? [Any] ?? []
        #expect(page.first as? Int == 200)
        #expect((page.last as? String ?? "").contains("queueplayerd_token=s3cret-token-0123456789; HttpOnly; SameSite=Strict"))
        #expect(steps["script without"] as? Int == 401)
    }

    /// RFC 6455: a frame from the client that is not masked closes the connection with 1002, a
    /// text message that is not UTF-8 with 1007, and neither is answered. RFC 9112: a request
    /// with two Host headers is answered 400 (the first would have decided).
    @Test func unmaskedFramesInvalidTextAndTwoHostsAreRefused() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("strict")
        #expect((steps.object("masked")["answers"] as? [String])?.count == 1, "a masked frame is answered")
        for (step, code) in [("unmasked", 1002), ("unmasked ping", 1002), ("invalid utf-8", 1007)] {
            let result = steps.object(step)
            #expect(result["close"] as? Int == code, "\(step): \(result)")
            #expect((result["answers"] as? [String])?.isEmpty == true, "\(step): \(result)")
        }
        #expect(steps["two hosts upgrade"] as? Int == 400)
        #expect(steps["two hosts page"] as? Int == 400)
        #expect(steps["one host page"] as? Int == 200)
    }

    /// A client that reads nothing and floods requests is dropped once its buffer is full;
    /// another client's ticks go on meanwhile.
    @Test func aClientThatDoesNotReadIsDroppedAndOthersKeepTheirTicks() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("slow", ["6"])
        #expect(daemon.standardError.contains("messages unread; disconnected"), "\(daemon.standardError)")
        #expect(steps["send failed after"] is Double, "the server closed the silent client's connection")
        let ticks = (steps["reader ticks"] as? [[Double]] ?? []).map { $0[0] }
        #expect(ticks.count >= 350, "6 s at 10 ms beside the flood: \(ticks.count)")
        let gaps: [Double] = zip(ticks.dropFirst(), ticks).map { ($0 - $1) * 1000 }
        let shown = [percentile(gaps, 50), percentile(gaps, 99), gaps.max() ?? 0].map { String(format: "%.2f", $0) }
        print("reader beside a flooding client: \(ticks.count) ticks, gap p50 \(shown[0]) ms, p99 \(shown[1]) ms, max \(shown[2]) ms")
        #expect(percentile(gaps, 99) < 60)
        #expect(steps.object("reader still answers")["ok"] != nil)
    }

    @Test func tooManyClientsAreRefusedCleanly() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("limit", ["32"])
        let extra = steps.object("extra")
        #expect(extra["code"] as? Int == 1013 && extra["reason"] as? String == "too many connections", "\(extra)")
        #expect(steps.object("after one left")["ok"] != nil, "a client gets in once one has left")
    }
}

import Foundation
import TestSupport
import Testing

/// python-mpd2 (Debian's python3-mpd 3.0.5, which belongs to /usr/bin/python3) against the
/// control socket, through `Scripts/mpd2_client.py`; compare transcript 40.
@Suite(.serialized) struct ControlSocketPythonTests {
    typealias Expect = ControlSocketExpectations

    static let script = TestMedia.integrationTests
        .appendingPathComponent("Scripts/mpd2_client.py")

    /// The steps the script printed: step name → `ok` value or `error` text.
    struct Steps {
        var results: [String: (ok: Any?, error: String?)] = [:]
        var order: [String] = []

        /// Every non-empty line must be a step: a line that is not (two lines run together, a
        /// stray print) is an issue of its own, not a step silently missing later.
        init(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
            for line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let data = line.data(using: .utf8),
                      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                      let step = object["step"] as? String else {
                    Issue.record("the script printed a line that is not a step: \(line)", sourceLocation: sourceLocation)
                    continue
                }
                order.append(step)
                let ok = object["ok"].flatMap { $0 is NSNull ? nil : $0 }
                results[step] = (ok, object["error"] as? String)
            }
        }

        /// A step that must have succeeded; records an issue (with the error) otherwise.
        func ok(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any? {
            guard let result = results[step] else {
                Issue.record("the script printed no step \(step) (steps: \(order))", sourceLocation: sourceLocation)
                return nil
            }
            if let error = result.error {
                Issue.record("\(step) raised \(error)", sourceLocation: sourceLocation)
                return nil
            }
            return result.ok
        }

        /// A dict result as ordered pairs (python-mpd2 lower-cases the keys).
        func dict(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> [(key: String, value: String)]? {
            guard let value = ok(step, sourceLocation: sourceLocation) else { return nil }
            return Steps.pairs(value)
        }

        static func pairs(_ value: Any) -> [(key: String, value: String)]? {
            guard let list = value as? [[String]] else { return nil }
            return list.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        }

        /// A step that returned `None` (python-mpd2 found no body lines) without raising.
        func returnedNone(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
            guard let result = results[step] else {
                Issue.record("the script printed no step \(step) (steps: \(order))", sourceLocation: sourceLocation)
                return
            }
            #expect(result.error == nil, "\(step) raised \(result.error ?? "")", sourceLocation: sourceLocation)
            #expect(result.ok == nil, "\(step) returned \(String(describing: result.ok))", sourceLocation: sourceLocation)
        }
    }

    /// mpd's status keys, in mpd's order, for a daemon without a mixer.
    /// mpd's keys, then queueplayerd's `appstate` (python-mpd2 takes extra keys as they come).
    /// mpd's keys, then the daemon's own: the life cycle's and the pace's (`silenceskipped` only
    /// with a current item).
    static let stoppedEmptyKeys = ["volume", "repeat", "random", "single", "consume", "partition", "playlist",
                                   "playlistlength", "mixrampdb", "state", "appstate", "rate", "pitchalgorithm", "skipsilence"]
    static let playingKeys = Array(stoppedEmptyKeys.prefix(10)) + ["song", "songid", "time", "elapsed", "bitrate", "duration",
                                                                   "audio", "nextsong", "nextsongid", "appstate",
                                                                   "rate", "pitchalgorithm", "skipsilence", "silenceskipped"]

    /// `duration:` as mpd prints it (3 decimals), from the exact decoded length of the item.
    static func duration(of index: Int, rate: Double) throws -> String {
        let frames = try TestMedia.frameCount(TestMedia.directory.appendingPathComponent(Expect.media[index].file))
        return String(format: "%.3f", Double(frames) / rate)
    }

    @Test func pythonMPD2Client() throws {
        try #require(FileManager.default.fileExists(atPath: Self.script.path), "missing \(Self.script.path)")
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path])
        defer { daemon.stop() }
        let run = try ToolRun.run("/usr/bin/python3", [Self.script.path, daemon.socket], timeout: 40)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr == "", "\(run)")
        let steps = Steps(run.stdout)
        #expect(steps.order.last == "done", "the script did not finish: \(run)")
        let durations = [try Self.duration(of: 0, rate: 44_100), try Self.duration(of: 1, rate: 44_100),
                         try Self.duration(of: 2, rate: 22_050), try Self.duration(of: 3, rate: 44_100)]

        // The greeting's version, as python-mpd2 keeps it.
        let version = steps.ok("mpd_version") as? String ?? ""
        #expect(version.wholeMatch(of: #/0\.2[1-9](\.\d+)?/#) != nil, "mpd_version \(version.debugDescription)")

        // status() stopped with an empty queue: mpd's keys in mpd's order, no `volume` (no mixer).
        if let status = steps.dict("status_empty") {
            #expect(status.map(\.key) == Self.stoppedEmptyKeys, "\(status)")
            let values = valueMap(status)
            #expect(values["repeat"] == "0" && values["random"] == "0" && values["single"] == "0" && values["consume"] == "0", "\(status)")
            #expect(values["partition"] == "default" && values["playlistlength"] == "0" && values["mixrampdb"] == "0", "\(status)")
            #expect(values["state"] == "stop", "\(status)")
            #expect(values["playlist"].flatMap { UInt($0) } != nil, "\(status)")
        }
        #expect(steps.dict("currentsong_empty").map { $0.isEmpty } == true, "currentsong() on an empty queue is {}")

        // add("") → `add ""`: the whole music directory, in name order.
        steps.returnedNone("add_all")
        var ids: [String] = []
        if let list = steps.ok("playlistinfo") as? [Any] {
            let songs = list.compactMap(Steps.pairs)
            #expect(songs.count == 4, "playlistinfo(): \(list)")
            for (index, song) in songs.enumerated() where index < 4 {
                let values = valueMap(song)
                let item = Expect.media[index]
                #expect(song.first?.key == "file", "every song block starts with file: \(song)")
                #expect(values["file"] == item.file, "\(song)")
                #expect(values["title"] == item.title, "\(song)")
                #expect(values["artist"] == Expect.artist, "\(song)")
                #expect(values["album"] == Expect.album, "\(song)")
                #expect(values["time"] == String(item.seconds), "\(song)")
                #expect(values["duration"] == durations[index], "\(song)")
                #expect(values["pos"] == String(index), "\(song)")
                ids.append(values["id"] ?? "?")
            }
            #expect(Set(ids).count == ids.count && ids.allSatisfy { UInt($0) != nil }, "song ids: \(ids)")
        } else {
            Issue.record("playlistinfo(): \(String(describing: steps.results["playlistinfo"]))")
        }
        // Stopped after add: there is no current song yet (transcript 40: `currentsong() [stopped]: {}`).
        #expect(steps.dict("currentsong_stopped").map { $0.isEmpty } == true, "\(String(describing: steps.results["currentsong_stopped"]))")

        // play(), then status() and currentsong() half a second later.
        steps.returnedNone("play")
        if let status = steps.dict("status_playing") {
            #expect(status.map(\.key) == Self.playingKeys, "\(status)")
            let values = valueMap(status)
            #expect(values["state"] == "play" && values["song"] == "0" && values["playlistlength"] == "4", "\(status)")
            #expect(ids.count == 4 && values["songid"] == ids[0] && values["nextsong"] == "1" && values["nextsongid"] == ids[1], "\(status)")
            let elapsed = values["elapsed"] ?? ""
            #expect(elapsed.wholeMatch(of: #/\d+\.\d{3}/#) != nil, "elapsed has 3 decimals: \(status)")
            let seconds = Double(elapsed) ?? -1
            #expect(seconds >= 0.3 && seconds <= 1.5, "elapsed \(elapsed) half a second after play()")
            // `time` rounds the exact elapsed time (as mpd's RoundS), `elapsed` shows it to the
            // millisecond: within half a millisecond of a half second the two may round apart.
            let whole = Set([seconds - 0.0005, seconds + 0.0005].map { Int($0.rounded()) })
            #expect(whole.map { "\($0):18" }.contains(values["time"] ?? ""), "time is int(elapsed):int(duration): \(status)")
            #expect(values["duration"] == durations[0], "\(status)")
            #expect(values["bitrate"].flatMap { UInt($0) } != nil, "\(status)")
            let audio = values["audio"] ?? ""
            #expect(audio.hasPrefix("44100:") && audio.hasSuffix(":2") && audio.split(separator: ":").count == 3, "\(status)")
        }
        if let song = steps.dict("currentsong_playing") {
            let values = valueMap(song)
            #expect(song.first?.key == "file", "\(song)")
            #expect(values["file"] == Expect.media[0].file && values["title"] == Expect.media[0].title, "\(song)")
            #expect(values["artist"] == Expect.artist && values["album"] == Expect.album, "\(song)")
            #expect(values["time"] == "18" && values["duration"] == durations[0], "\(song)")
            #expect(values["pos"] == "0" && ids.first == values["id"], "\(song)")
        }

        // pause(1) → `pause "1"`.
        steps.returnedNone("pause")
        if let status = steps.dict("status_paused") {
            let values = valueMap(status)
            #expect(values["state"] == "pause" && values["song"] == "0", "\(status)")
        }

        // next() while paused: the next item, playing (transcript 40's command list after pause + next).
        steps.returnedNone("next")
        if let list = steps.ok("command_list") as? [Any] {
            let replies = list.compactMap(Steps.pairs)
            #expect(replies.count == 2, "command_list_end(): \(list)")
            if replies.count == 2 {
                let status = valueMap(replies[0])
                let song = valueMap(replies[1])
                #expect(replies[0].map(\.key) == Self.playingKeys, "\(replies[0])")
                #expect(status["state"] == "play" && status["song"] == "1" && status["nextsong"] == "2", "\(replies[0])")
                #expect(ids.count == 4 && status["songid"] == ids[1], "\(replies[0])")
                #expect(Double(status["elapsed"] ?? "").map { $0 < 0.5 } == true, "\(replies[0])")
                #expect(status["duration"] == durations[1] && status["time"]?.hasSuffix(":20") == true, "\(replies[0])")
                #expect(song["file"] == Expect.media[1].file && song["title"] == Expect.media[1].title && song["pos"] == "1", "\(replies[1])")
            }
        } else {
            Issue.record("command list: \(String(describing: steps.results["command_list"]))")
        }

        // play(99) → mpd.CommandError whose text is the ACK without `ACK `.
        #expect(steps.results["play_99"]?.error == "CommandError: [2@0] {play} Bad song index",
                "\(String(describing: steps.results["play_99"]))")

        // idle(): this client's own add/play/pause/next are pending, so it returns at once (§6).
        if let idle = steps.dict("idle_own_events") {
            let values = valueMap(idle)
            #expect(values["changed"] == #"["playlist", "player"]"#, "\(idle)")
            #expect((Double(values["seconds"] ?? "") ?? 99) < 0.5, "\(idle)")
        }
        // idle() again: a second MPDClient's next() wakes it with ['player'].
        steps.returnedNone("other_next")
        if let idle = steps.dict("idle_other_next") {
            let values = valueMap(idle)
            #expect(values["changed"] == #"["player"]"#, "\(idle)")
            let delay = Double(values["delay"] ?? "") ?? -1
            #expect(delay >= 0 && delay < 0.5, "idle() returned \(delay) s after the other client's next()")
        }
        // That next() moved on to item 3 (22.05 kHz mono).
        if let status = steps.dict("status_after_other_next") {
            let values = valueMap(status)
            #expect(values["state"] == "play" && values["song"] == "2" && values["nextsong"] == "3", "\(status)")
            #expect(values["duration"] == durations[2] && values["time"]?.hasSuffix(":14") == true, "\(status)")
            let audio = values["audio"] ?? ""
            #expect(audio.hasPrefix("22050:") && audio.hasSuffix(":1"), "\(status)")
        }
        if let song = steps.dict("currentsong_after_other_next") {
            let values = valueMap(song)
            #expect(values["file"] == Expect.media[2].file && values["title"] == Expect.media[2].title && values["pos"] == "2", "\(song)")
        }
        steps.returnedNone("close")
        #expect(daemon.process.isRunning, "stderr: \(daemon.process.standardError)")
    }
}

import DaemonCore
import Foundation
import MPDProtocol
import TestSupport
import Testing

/// The commands the daemon adds to mpd's (`clearerror`, `readcomments`, `playlist`, `searchaddpl`,
/// `rangeid`, `addtagid`, `cleartagid`, `kill`, `outputset`, `moveoutput`, the partition
/// commands) answer as mpd 0.23.12 did: its transcript (IntegrationTests' `Transcripts/51-raw-missing-commands.txt`,
/// taken by `Transcripts/capture_commands.py`) is replayed, request by request, against the
/// daemon over the same music directory (`Scripts/transcript_library.py`) and the same
/// permissions, and every reply is compared line by line.
///
/// What cannot be the same is normalised, and only that: the values of lines that depend on
/// when the file was made or on the decoder (`Last-Modified`, `Format`, `audio`, `bitrate`,
/// `time`), a song's length within 0.1 s (mpd counts the encoder's delay and padding, this
/// daemon plays gaplessly), the null output's name, and the commands neither has of the other
/// (mpd's mounts and fingerprints, this daemon's location commands). `status` is compared by
/// mpd's keys, which the daemon's reply must hold (it has `volume` and `appstate` besides).
@Suite("mpd 0.23 transcript of the added commands", .serialized)
struct CommandTranscriptTests {
    static let transcript = TranscriptLibrary.transcripts.appendingPathComponent("51-raw-missing-commands.txt")

    /// One request of the transcript and the lines mpd answered; `note` is the section's title.
    struct Exchange {
        var note: String
        var request: String
        var expected: [String]
    }

    /// mpd's commands this daemon does not have (no mounts, neighbors or fingerprints), and
    /// this daemon's own. mpd ran without a `sticker_file`, as the daemon does here.
    static let onlyMPDs: Set<String> = ["getfingerprint", "listmounts", "listneighbors", "mount", "unmount"]
    static let onlyOurs = Command.namesNotInMPD

    static func exchanges() throws -> [Exchange] {
        var exchanges: [Exchange] = []
        var note = ""
        for line in try String(contentsOf: transcript, encoding: .utf8).split(separator: "\n") {
            if line.hasPrefix("# --- ") {
                note = String(line.dropFirst(6))
            } else if let range = line.range(of: "] -> b'") {
                exchanges.append(Exchange(note: note, request: unescape(line[range.upperBound...].dropLast()), expected: []))
            } else if let range = line.range(of: "] <- "), !exchanges.isEmpty {
                exchanges[exchanges.count - 1].expected.append(String(line[range.upperBound...]))
            }
        }
        return exchanges
    }

    /// The text of a Python bytes literal's body (`\\`, `\'`, `\n`, `\t`, `\xNN`).
    static func unescape(_ literal: Substring) -> String {
        var bytes: [UInt8] = []
        var characters = Array(literal.utf8)[...]
        while let byte = characters.popFirst() {
            guard byte == UInt8(ascii: "\\"), let next = characters.popFirst() else {
                bytes.append(byte)
                continue
            }
            switch next {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "x"):
                let hex = String(decoding: characters.prefix(2), as: UTF8.self)
                characters = characters.dropFirst(2)
                bytes.append(UInt8(hex, radix: 16) ?? 0)
            default: bytes.append(next)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theTranscriptHasEveryAddedCommand() throws {
        let requested = Set(try Self.exchanges().map { String($0.request.prefix { $0 != " " && $0 != "\n" }) })
        for name in ["clearerror", "readcomments", "playlist", "searchaddpl", "rangeid", "addtagid", "cleartagid", "kill",
                     "outputset", "moveoutput", "listpartitions", "partition", "newpartition", "delpartition",
                     "commands", "notcommands"] {
            #expect(requested.contains(name), "\(name)")
        }
    }

    @Test func theDaemonAnswersTheTranscriptsRequestsAsMPDDid() throws {
        let library = try TranscriptLibrary()
        defer { library.remove() }
        let daemon = try library.daemon {
            $0.defaultPermissions = try Permission.parse("read")
            $0.passwords = [try PasswordSetting.parse("s3cret@read,add,player,control,admin")]
            $0.stickerFile = .off
        }
        defer { daemon.stop() }
        let probe = try daemon.client()
        let ourOutput = try #require(replyValue(try probe.request("outputs"), "outputname"))
        probe.close()

        let client = try daemon.client()
        let exchanges = try Self.exchanges()
        #expect(exchanges.count > 100)
        for exchange in exchanges {
            var request = exchange.request
            if request == "moveoutput null\n" { request = "moveoutput \"\(ourOutput)\"\n" }
            if exchange.note.hasPrefix("half a second into the range") {
                try daemon.waitForElapsed(atLeast: 0.5)
            }
            try client.send(request)
            if request == "kill\n", exchange.expected.isEmpty {
                // No reply: the connection closes, and the daemon stops as on SIGTERM, cleanly (status 0).
                let end = client.waitForEndOfFile(timeout: 10)
                #expect(end.closed && end.received.isEmpty, "kill: \(end)")
                #expect(daemon.waitForEnd(timeout: 15) == true, "the daemon's exit after kill")
                return
            }
            let ours = try client.readReply()
            let theirs = exchange.expected.map { $0 == "outputname: null" ? "outputname: \(ourOutput)" : $0 }
            compare(ours, theirs, request: request)
        }
        Issue.record("the transcript has no kill")
    }

    private func compare(_ ours: [String], _ theirs: [String], request: String) {
        let name = request.prefix { $0 != " " && $0 != "\n" }
        switch name {
        case "commands", "notcommands":
            let (mine, mpds) = (commandNames(ours), commandNames(theirs))
            #expect(mine.subtracting(Self.onlyOurs).isSubset(of: mpds), "\(request): not mpd's: \(mine.subtracting(mpds))")
            #expect(mpds.subtracting(mine).isSubset(of: Self.onlyMPDs), "\(request): missing: \(mpds.subtracting(mine))")
            #expect(ours.last == "OK")
        case "status":
            let keys = Set(ours.map { $0.prefix { $0 != ":" } })
            for line in theirs { #expect(keys.contains(line.prefix { $0 != ":" }), "\(request): \(line) missing from \(ours)") }
            let (elapsed, duration) = (number(ours, "elapsed"), number(ours, "duration"))
            // The range's own time: half a second in, not 10.5 s into the file.
            #expect(elapsed >= 0.5 && elapsed < duration, "\(ours)")
            #expect(abs(duration - number(theirs, "duration")) < 0.1, "\(ours)")
        default:
            #expect(ours.count == theirs.count, "\(request): \(ours) against mpd's \(theirs)")
            for (mine, mpds) in zip(ours, theirs) where !sameLine(mine, mpds) {
                Issue.record("\(request.debugDescription): \(mine.debugDescription), mpd answered \(mpds.debugDescription)")
            }
        }
    }

    /// Equal, or the same key with a value that may differ (see the suite's comment).
    private func sameLine(_ mine: String, _ mpds: String) -> Bool {
        if mine == mpds { return true }
        let (key, mpdKey) = (mine.prefix { $0 != ":" }, mpds.prefix { $0 != ":" })
        guard key == mpdKey else { return false }
        switch key {
        case "Last-Modified", "Format": return true
        case "duration": return abs(number([mine], "duration") - number([mpds], "duration")) < 0.1
        case "Time": return abs(number([mine], "Time") - number([mpds], "Time")) <= 1
        default: return false
        }
    }

    private func commandNames(_ lines: [String]) -> Set<String> {
        Set(lines.filter { $0.hasPrefix("command: ") }.map { String($0.dropFirst(9)) })
    }

    private func number(_ lines: [String], _ key: String) -> Double {
        replyValue(lines, key).flatMap(Double.init) ?? -1
    }
}

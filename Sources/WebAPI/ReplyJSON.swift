import Foundation
import MPDProtocol

/// Turns what the command layer sends a control-socket client (``SessionAction``s: `key: value`
/// lines, `OK`, or an `ACK`) into the WebSocket API's answer: `{"ok": ...}` or
/// `{"error": {"ack": N, "index": I, "command": "...", "message": "..."}}`.
///
/// Going through the session's rendered text rather than the executor's ``Reply`` is what keeps
/// the WebSocket's answers the socket's answers: the same session answers protocol-level
/// commands, applies `tagtypes`, cuts binary replies to `binarylimit`, and names the failing
/// command in its ACK. The text is mpd's, which is regular: one `key: value` per line.
///
/// The shape (docs/websocket.md, "Replies"):
/// * a command that lists things (the command table's list replies, ``MPDProtocol/Command/repliesWithList(named:)``) answers an array: of objects, one per
///   entry (a new entry starts where the reply's first key comes again, or at `file`,
///   `directory` or `playlist`), or of strings when every entry is one field of the same key
///   (`commands`, `list artist`);
/// * any other command answers one object; a key given several times (a song's `Artist`s)
///   holds an array;
/// * the values of ``numericKeys`` are numbers, every other value a string (a title `1999`
///   stays a string);
/// * a binary reply's payload (`albumart`) is `binary` in base64.
enum ReplyJSON {
    /// Fields whose values are numbers (when they parse as one).
    static let numericKeys: Set<String> = [
        "volume", "repeat", "random", "consume", "playlist", "playlistlength", "song", "songid",
        "nextsong", "nextsongid", "elapsed", "duration", "bitrate", "xfade", "mixrampdb", "mixrampdelay",
        "updating_db", "transfers", "Time", "Pos", "Id", "Prio", "outputid", "outputenabled", "cpos",
        "uptime", "playtime", "artists", "albums", "songs", "db_playtime", "db_update",
        "rate", "skipsilence", "silenceskipped",
        // Chapters (`chapters`, `status`).
        "chapter", "start", "end",
    ]

    /// The answer to `command` (its name, for the shape) from the actions its run produced.
    static func answer(command: String, actions: [SessionAction]) -> JSONValue {
        var text = ""
        var binary: [UInt8]?
        for action in actions {
            switch action {
            case .send(let more): text += more
            case .sendBytes(let bytes): binary = Array(bytes.dropLast())  // the payload's trailing newline
            case .close: break
            }
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        if let last = lines.last, last.hasPrefix("ACK ") {
            return .object([("error", error(fromACK: last))])
        }
        if lines.last == "OK" { lines.removeLast() }
        var pairs: [(String, String)] = []
        for line in lines {
            guard let colon = line.range(of: ": ") else {
                // `binary: N` is followed by the payload; anything else without ": " is not a field.
                if line.hasSuffix(":") { pairs.append((String(line.dropLast()), "")) }
                continue
            }
            pairs.append((String(line[..<colon.lowerBound]), String(line[colon.upperBound...])))
        }
        if command == Command.Kind.playlist.name { pairs = pairs.map { (positionless($0.0), $0.1) } }
        if let binary {
            pairs.removeAll { $0.0 == "binary" }
            pairs.append(("binary", Data(binary).base64EncodedString()))
        }
        let body = Command.repliesWithList(named: command) ? list(pairs) : object(pairs)
        return .object([("ok", body)])
    }

    /// `playlist`'s `3:file` as `file`: the position is the entry's place in the array, and a
    /// key of its own per entry made one object of them all.
    private static func positionless(_ key: String) -> String {
        guard let colon = key.firstIndex(of: ":"), UInt(key[..<colon]) != nil else { return key }
        return String(key[key.index(after: colon)...])
    }

    /// `ACK [50@0] {play} No such song` as `{"ack": 50, "index": 0, "command": "play", "message": "..."}`.
    static func error(fromACK line: String) -> JSONValue {
        var rest = Substring(line.dropFirst(4))
        var ack = 0
        var index = 0
        var command = ""
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            let code = rest[rest.index(after: rest.startIndex)..<close].split(separator: "@")
            ack = code.first.flatMap { Int($0) } ?? 0
            index = code.dropFirst().first.flatMap { Int($0) } ?? 0
            rest = rest[rest.index(after: close)...].drop(while: { $0 == " " })
        }
        if rest.hasPrefix("{"), let close = rest.firstIndex(of: "}") {
            command = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...].drop(while: { $0 == " " })
        }
        return .object([("ack", .int(ack)), ("index", .int(index)), ("command", .string(command)),
                        ("message", .string(String(rest)))])
    }

    /// An error of the WebSocket layer itself (bad JSON, a bad interval), in the same shape as
    /// an ACK's; `ack` is mpd's code for the kind of mistake (2: argument, 5: unknown).
    static func error(ack: ACKCode, command: String = "", message: String) -> JSONValue {
        .object([("ack", .int(Int(ack.rawValue))), ("index", .int(0)), ("command", .string(command)),
                 ("message", .string(message))])
    }

    private static func value(_ key: String, _ text: String) -> JSONValue {
        if numericKeys.contains(key) {
            if let int = Int(text) { return .int(int) }
            if let double = Double(text), double.isFinite { return .double(double) }
        }
        return .string(text)
    }

    /// Fields in order; a key given again holds an array of its values, at its first place.
    static func object(_ pairs: some Collection<(String, String)>) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        var place: [String: Int] = [:]
        for (key, text) in pairs {
            let new = value(key, text)
            if let index = place[key] {
                if case .array(let values) = fields[index].1 {
                    fields[index].1 = .array(values + [new])
                } else {
                    fields[index].1 = .array([fields[index].1, new])
                }
            } else {
                place[key] = fields.count
                fields.append((key, new))
            }
        }
        return .object(fields)
    }

    /// Entries split where the first key comes again (or an entity key starts one).
    static func list(_ pairs: [(String, String)]) -> JSONValue {
        guard let firstKey = pairs.first?.0 else { return .array([]) }
        let entityKeys: Set<String> = ["file", "directory", "playlist"]
        var entries: [[(String, String)]] = []
        for pair in pairs {
            let startsEntry = pair.0 == firstKey || entityKeys.contains(firstKey) && entityKeys.contains(pair.0)
            if entries.isEmpty || startsEntry {
                entries.append([pair])
            } else {
                entries[entries.count - 1].append(pair)
            }
        }
        if entries.allSatisfy({ $0.count == 1 && $0[0].0 == firstKey }) {
            return .array(entries.map { value($0[0].0, $0[0].1) })
        }
        return .array(entries.map { object($0) })
    }
}

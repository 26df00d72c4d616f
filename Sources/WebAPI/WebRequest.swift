#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MPDProtocol

/// One message a WebSocket client sends, parsed (docs/websocket.md):
/// `{"id": 1, "command": "status"}`, `{"subscribe": "time", "interval": 0.01}`,
/// `{"subscribe": "boundary", "times": [10, 20.5]}`, `{"unsubscribe": 3}` (or `"time"`,
/// `"boundary"`, `"all"`). `id` is optional, any JSON number or string, and is echoed.
///
/// Pure, so that every refusal (not JSON, no known key, an interval out of range) is a unit test;
/// a refusal is answered with an error and the connection stays usable.
struct WebRequest: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// An MPD command line, run through the same command layer as the control socket's.
        case command(String)
        /// A periodic time subscription, every `interval` seconds of audible time.
        case subscribeTime(interval: Double)
        /// A boundary subscription: one push as playback crosses each time.
        case subscribeBoundary(times: [Double])
        case unsubscribe(Unsubscribe)
    }

    enum Unsubscribe: Sendable, Equatable {
        case subscription(Int)
        case allTime, allBoundary, all
    }

    /// The client's `id`, echoed in the answer (as given: a number or a string).
    var id: JSONValue?
    var action: Action

    /// The range a periodic subscription's interval must be in, seconds.
    static let intervals: ClosedRange<Double> = 0.01...60
    /// The most boundary times one subscription may carry.
    static let maximumBoundaryTimes = 100
    /// The longest command line (the control socket's own limit).
    static let maximumCommandLength = 4096

    /// A message that is not a request: the answer's error, and the `id` if one could be read.
    struct Refusal: Error, Sendable, Equatable {
        var id: JSONValue?
        var ack: ACKCode
        var message: String
    }

    static func parse(_ text: String) throws(Refusal) -> WebRequest {
        guard let parsed = try? JSONDecoder().decode(Incoming.self, from: Data(text.utf8)), case .object(let object) = parsed else {
            throw Refusal(id: nil, ack: .argument, message: "not a JSON object")
        }
        var id: JSONValue?
        switch object["id"] {
        case nil, .null?: id = nil
        case .string(let string)?: id = .string(string)
        case .number(let number)?: id = number == number.rounded() && abs(number) < 1e15 ? .int(Int(number)) : .double(number)
        default: throw Refusal(id: nil, ack: .argument, message: "\"id\" must be a number or a string")
        }
        if let command = object["command"] {
            guard case .string(let line) = command, !line.isEmpty else {
                throw Refusal(id: id, ack: .argument, message: "\"command\" must be a command line, e.g. \"status\"")
            }
            guard line.utf8.count <= maximumCommandLength else {
                throw Refusal(id: id, ack: .argument, message: "a command is one line of at most \(maximumCommandLength) bytes")
            }
            // Bytes, not characters: "\r\n" is one Character, equal to neither "\r" nor "\n", and
            // the command layer would split the line there and run what follows as a second command.
            guard !line.utf8.contains(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) else {
                throw Refusal(id: id, ack: .argument, message: "a command is one line: no CR or LF inside \"command\"")
            }
            return WebRequest(id: id, action: .command(line))
        }
        if let kind = object["subscribe"] {
            switch kind {
            case .string("time"):
                guard case .number(let interval)? = object["interval"] else {
                    throw Refusal(id: id, ack: .argument, message: "a time subscription needs \"interval\", in seconds")
                }
                guard intervals.contains(interval) else {
                    throw Refusal(id: id, ack: .argument,
                                  message: "\"interval\" must be from \(intervals.lowerBound) to \(Int(intervals.upperBound)) seconds")
                }
                return WebRequest(id: id, action: .subscribeTime(interval: interval))
            case .string("boundary"):
                guard case .array(let list)? = object["times"], !list.isEmpty, list.count <= maximumBoundaryTimes else {
                    throw Refusal(id: id, ack: .argument,
                                  message: "a boundary subscription needs \"times\": 1 to \(maximumBoundaryTimes) seconds")
                }
                var times: [Double] = []
                for entry in list {
                    guard case .number(let time) = entry, time >= 0 else {
                        throw Refusal(id: id, ack: .argument, message: "\"times\" must be seconds, 0 or more")
                    }
                    times.append(time)
                }
                return WebRequest(id: id, action: .subscribeBoundary(times: times))
            default:
                throw Refusal(id: id, ack: .argument, message: "\"subscribe\" must be \"time\" or \"boundary\"")
            }
        }
        if let what = object["unsubscribe"] {
            switch what {
            case .number(let number) where number == number.rounded() && abs(number) < 1e15:
                return WebRequest(id: id, action: .unsubscribe(.subscription(Int(number))))
            case .string("time"): return WebRequest(id: id, action: .unsubscribe(.allTime))
            case .string("boundary"): return WebRequest(id: id, action: .unsubscribe(.allBoundary))
            case .string("all"): return WebRequest(id: id, action: .unsubscribe(.all))
            default:
                throw Refusal(id: id, ack: .argument,
                              message: "\"unsubscribe\" must be a subscription's number, \"time\", \"boundary\" or \"all\"")
            }
        }
        throw Refusal(id: id, ack: .unknown, message: "unknown request: give \"command\", \"subscribe\" or \"unsubscribe\"")
    }

    /// Any JSON value, as `JSONDecoder` tells them apart (a boolean is not a number here, as it
    /// is for `JSONSerialization`'s `NSNumber`s).
    private enum Incoming: Decodable, Equatable {
        case null, bool(Bool), number(Double), string(String), array([Incoming]), object([String: Incoming])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
            else if let number = try? container.decode(Double.self) { self = .number(number) }
            else if let string = try? container.decode(String.self) { self = .string(string) }
            else if let array = try? container.decode([Incoming].self) { self = .array(array) }
            else { self = .object(try container.decode([String: Incoming].self)) }
        }
    }
}

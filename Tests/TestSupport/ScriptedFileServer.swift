import Foundation
import Synchronization

/// A file served by a ``ScriptedHTTPServer`` the way a CDN serves an episode (length, `ETag`,
/// `Accept-Ranges: bytes`, `Range` and `If-Range` honoured), with the faults a test scripts per
/// response: the connection cut after some body bytes, a stall (nothing sent, the connection
/// kept) for a while, a `200` to a range, the resource changed (another `ETag`) from some
/// response on, a trickle. Every response is counted (``responses``), in order of arrival.
public final class ScriptedFileServer: Sendable {
    /// What the server does to one response (by its index, 0 for the first).
    public struct Faults: Sendable {
        /// Closes the connection after this many body bytes of the response.
        public var cutAfter: [Int: Int] = [:]
        /// Sends nothing after this many body bytes of the response, for `stallSeconds`
        /// (or until the client hangs up), then goes on.
        public var stallAfter: [Int: Int] = [:]
        public var stallSeconds: Double = 30
        /// Answers these responses `200` with the whole body, whatever range was asked.
        public var ignoreRange: Set<Int> = []
        /// From this response on, the resource has another `ETag` (and, for a test of a
        /// server that ignores `If-Range`, still answers the range: `ignoreIfRange`).
        public var changedFrom: Int?
        public var ignoreIfRange = false
        /// Sends the body at about this many bytes a second (nil: as fast as it goes).
        public var bytesPerSecond: Int?
        public var contentType = "audio/mpeg"
        public var sendETag = true

        public init() {}
    }

    public let server: ScriptedHTTPServer
    public let path: String
    private let count = Counter()

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Serves `body` at `/path` on a new server.
    public init(_ body: Data, path: String = "episode.mp3", faults: Faults = Faults()) throws {
        self.path = path
        let counter = count
        server = try ScriptedHTTPServer { request, connection in
            let index = counter.value.add(1, ordering: .relaxed).oldValue
            Self.answer(request, connection, body: body, index: index, faults: faults)
        }
    }

    /// The URL of the file.
    public var url: URL { server.url(path) }
    /// How many responses were begun.
    public var responses: Int { count.value.load(ordering: .relaxed) }

    private static func answer(_ request: ScriptedHTTPServer.Request, _ connection: ScriptedHTTPServer.Connection,
                               body: Data, index: Int, faults: Faults) {
        let tag = faults.changedFrom.map { index >= $0 } == true ? "\"v2\"" : "\"v1\""
        var start = 0
        if !faults.ignoreRange.contains(index), let range = request.header("Range"),
           let match = range.wholeMatch(of: #/bytes=(\d+)-/#), let from = Int(match.1), from < body.count {
            let ifRange = request.header("If-Range")
            if ifRange == nil || ifRange == tag || faults.ignoreIfRange { start = from }
        }
        var headers: [(String, String)] = [("Content-Type", faults.contentType), ("Accept-Ranges", "bytes"),
                                           ("Content-Length", "\(body.count - start)")]
        if faults.sendETag { headers.append(("ETag", tag)) }
        if start > 0 { headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")) }
        guard connection.writeHead(start > 0 ? "206 Partial Content" : "200 OK", headers) else { return }
        var sent = 0
        let chunk = 4096
        while start + sent < body.count, connection.isOpen {
            var size = min(chunk, body.count - start - sent)
            if let cut = faults.cutAfter[index] {
                if sent >= cut { return }
                size = min(size, cut - sent)
            }
            if let stall = faults.stallAfter[index], sent <= stall, sent + size > stall {
                size = stall - sent
                if size == 0 {
                    connection.pause(faults.stallSeconds)
                    size = min(chunk, body.count - start - sent)
                }
            }
            if let rate = faults.bytesPerSecond { size = min(size, max(1, rate / 10)) }
            guard size > 0, connection.write(body.subdata(in: (start + sent)..<(start + sent + size))) else { return }
            sent += size
            if let rate = faults.bytesPerSecond { connection.pause(Double(size) / Double(rate)) }
        }
    }
}

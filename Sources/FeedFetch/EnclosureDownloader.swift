import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import LazyHTTP
import NIOCore
import NIOHTTP1

/// One attempt at an enclosure: the body streamed into the job's `.part` file, opened for
/// append, resuming where it ends.
///
/// A resumed request carries `Range: bytes=N-` and `If-Range` with the validator of the
/// response the file holds the start of, and continues only on a `206` whose validator is
/// the one sent (its `ETag`, or its `Last-Modified` when the date was sent) and whose
/// `Content-Range` starts at N. A `200` (the server ignored the range, or the file changed
/// and `If-Range` no longer matched) starts the file over from zero; any other `206` does
/// too, with a new request for the whole file: a server that ignores `If-Range` answered a
/// changed file's range with the new version's tail, spliced onto the old one's head. Nothing
/// of two versions is ever spliced together. (This is why AsyncHTTPClient's
/// `FileDownloadDelegate` is not used: it cannot resume.)
///
/// An attempt slower than the ``LowSpeedLimit`` (1 KiB/s over 30 s) is cut and tried again
/// later; the response's head has ``Limits/headerTimeout`` to arrive. A redirect loop fails for
/// good at once, as a feed's does.
///
/// A body that is not audio (an HTML or text page, by its type or its first bytes) and one
/// larger than the cap fail for good and leave no file; a body that ends short of its
/// length, a lost connection or a server error is worth another try, and keeps what came.
/// File writes go to a queue of their own, not the Swift task's thread, through the attempt's
/// ``PartFile`` (open from its first byte to the attempt's end).
public final class EnclosureDownloader: Sendable {
    /// How an attempt ended.
    public enum Outcome: Equatable, Sendable {
        /// The `.part` file holds the whole body.
        case finished
        /// Worth another try later; what arrived is kept (or was discarded, if it could not be resumed).
        case retry(String)
        /// Never worth another try (not audio, too large, gone): the `.part` file is removed.
        case failed(String)
    }

    /// How long an attempt may be slow or silent.
    public struct Limits: Sendable {
        /// The least average speed over a window (curl's `--speed-limit`/`--speed-time`).
        public var lowSpeed: LowSpeedLimit
        /// Seconds for the response's head to arrive.
        public var headerTimeout: Double
        /// Read when a chunk arrives: no byte for this long ends the attempt (to be retried).
        public var idleTimeout: Double

        public init(lowSpeed: LowSpeedLimit = LowSpeedLimit(), headerTimeout: Double = 60, idleTimeout: Double = 60) {
            self.lowSpeed = lowSpeed
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
        }
    }

    /// More than this many redirects is a loop (or a misconfigured site): the job fails.
    static let maximumRedirects = 5
    /// Made at the first download (``LazyHTTPClient``), shut down only if it was.
    let client: LazyHTTPClient
    private let io = DispatchQueue(label: "queueplayerd.transfers.io")
    private let minimumFreeSpace: Int64
    let limits: Limits

    /// `minimumFreeSpace`: a download stops (to be retried later) when its file system has
    /// less than this many bytes free, so a download never fills the disk.
    public init(eventLoopGroup: any EventLoopGroup, minimumFreeSpace: Int64 = 256 << 20, limits: Limits = Limits()) {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .follow(max: Self.maximumRedirects, allowCycles: false))
        configuration.timeout = .init(connect: .seconds(10), read: .nanoseconds(Int64(limits.idleTimeout * 1e9)))
        configuration.decompression = .disabled
        client = LazyHTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.minimumFreeSpace = minimumFreeSpace
        self.limits = limits
    }

    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Downloads `job` into `part`. `learnt` gets the validators of a response that starts
    /// the file from zero, before any byte of it is written, so that a journal has them if
    /// the daemon is killed mid-body.
    /// `progress` gets the bytes in the file as they are written (one relaxed atomic store a
    /// chunk), and the whole file's size once a response says it.
    public func download(_ job: TransferJob, to part: URL, maximumSize: Int64, progress: TransferProgressBoard.Counter? = nil,
                         learnt: @escaping @Sendable (FeedValidators) async -> Void) async -> Outcome {
        let meter = LowSpeedLimit.Meter(limits.lowSpeed)
        let progress = progress ?? TransferProgressBoard.Counter()
        return await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                .attempt(await self.attempt(job, to: part, maximumSize: maximumSize, meter: meter, progress: progress, learnt: learnt))
            }
            group.addTask { .watch(await meter.watch()) }
            var outcome = Outcome.retry("cancelled")
            var cut: String?
            for await ending in group {
                switch ending {
                case .attempt(let ended):
                    outcome = ended
                case .watch(let reason):
                    cut = reason
                }
                // Either the attempt ended (the watch is no longer wanted) or it was too slow.
                group.cancelAll()
            }
            // Cut: the attempt ended cancelled, keeping what came (it is resumed later).
            if let cut, case .retry = outcome { return .retry(cut) }
            return outcome
        }
    }

    private enum Ending: Sendable {
        case attempt(Outcome)
        /// Why the watch cut the attempt; nil if it was cancelled first.
        case watch(String?)
    }

    private func attempt(_ job: TransferJob, to part: URL, maximumSize: Int64, meter: LowSpeedLimit.Meter,
                         progress: TransferProgressBoard.Counter, learnt: @escaping @Sendable (FeedValidators) async -> Void) async -> Outcome {
        let file = PartFile(url: part, queue: io)
        // Queued after every write of this attempt: the next attempt's file operations come after it.
        defer { io.async { file.close() } }
        var offset = (try? FileManager.default.attributesOfItem(atPath: part.path)[.size] as? Int64) ?? 0
        if offset > 0 && job.ifRange == nil {
            // Nothing to make sure the rest is of the same file: start over.
            do {
                try await truncate(file)
            } catch {
                return .retry("could not empty \(part.lastPathComponent) to start over: \(error)")
            }
            offset = 0
        }
        progress.begin(received: offset, expected: nil)
        do {
            var response = try await execute(job, from: offset)
            if response.status.code == 206 && offset > 0 && !Self.continues(job, at: offset, response.headers) {
                // Not the rest of the version the file holds the start of: the whole file, anew.
                try await truncate(file)
                offset = 0
                response = try await execute(job, from: 0)
            }
            let code = Int(response.status.code)
            let contentLength = response.headers.first(name: "Content-Length").flatMap(Int64.init)
            var total: Int64?
            switch code {
            case 206 where offset > 0:
                total = response.headers.first(name: "Content-Range").flatMap(ContentRange.init)?.total
            case 200:
                // Not emptied, the whole body would follow the old bytes: a failure ends the attempt.
                if offset > 0 { try await truncate(file) }
                offset = 0
                total = contentLength
                await learnt(FeedValidators(entityTag: response.headers.first(name: "ETag"),
                                            lastModified: response.headers.first(name: "Last-Modified")))
            case 416:
                // `bytes */TOTAL`: a `.part` that already holds all TOTAL bytes was finished
                // when the daemon stopped; anything else starts over.
                if let header = response.headers.first(name: "Content-Range"),
                   let match = header.wholeMatch(of: #/\s*bytes\s+\*/(\d+)\s*/#), Int64(match.1) == offset {
                    try await synchronize(file)
                    return .finished
                }
                try? await truncate(file)
                return .retry("HTTP 416 (the range asked for is not there): starting over")
            case 408, 429, 500...599:
                return .retry("HTTP \(code) \(response.status.reasonPhrase)")
            default:
                await remove(file)
                return .failed("HTTP \(code) \(response.status.reasonPhrase)")
            }
            if let type = response.headers.first(name: "Content-Type")?.lowercased(), type.hasPrefix("text/") || type.contains("html") {
                await remove(file)
                return .failed("not audio: the server sent \(type)")
            }
            if let total, total > maximumSize {
                await remove(file)
                return .failed("\(total) bytes, more than the \(maximumSize) allowed (--max-download-size)")
            }
            // Space for what is still to come, checked before the first byte and every MiB.
            if let total, let free = Self.freeSpace(part), total - offset > free - minimumFreeSpace {
                return .retry(spaceProblem(free: free, needed: total - offset))
            }
            var written = offset
            progress.begin(received: offset, expected: total)
            var sinceSpaceCheck: Int64 = 1 << 20
            for try await chunk in response.body {
                let bytes = Data(chunk.readableBytesView)
                meter.count(bytes.count)
                if written == 0 && Self.looksLikeText(bytes) {
                    await remove(file)
                    return .failed("not audio: the body is an HTML or XML page")
                }
                written += Int64(bytes.count)
                if written > maximumSize {
                    await remove(file)
                    return .failed("more than the \(maximumSize) bytes allowed (--max-download-size)")
                }
                if sinceSpaceCheck >= 1 << 20 {
                    sinceSpaceCheck = 0
                    if let free = Self.freeSpace(part), free - Int64(bytes.count) < minimumFreeSpace {
                        return .retry(spaceProblem(free: free, needed: nil))
                    }
                }
                sinceSpaceCheck += Int64(bytes.count)
                try await append(bytes, to: file)
                progress.received(written)
            }
            try Task.checkCancellation()
            if let total, written != total {
                return .retry("the body ended after \(written) of \(total) bytes")
            }
            try await synchronize(file)
            return .finished
        } catch is CancellationError {
            return .retry("cancelled")
        } catch let error as IOError {
            return .retry("connection failed: \(ErrorText.describe(error))")
        } catch let error as HTTPClientError where error == .redirectCycleDetected || error == .redirectLimitReached {
            // The same loop the next time: failed for good, as a feed's redirect loop is.
            await remove(file)
            return .failed(error == .redirectCycleDetected ? "a redirect loop" : "more than \(Self.maximumRedirects) redirects")
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .retry("no response within \(Self.format(limits.headerTimeout)) s")
        } catch {
            return .retry(ErrorText.describe(error))
        }
    }

    /// The request for `job` from byte `offset`: a resumed one asks for the rest of the
    /// version the file holds the start of (`Range` and `If-Range`).
    private func execute(_ job: TransferJob, from offset: Int64) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: job.url.absoluteString)
        request.headers.add(name: "User-Agent", value: HTTPFeedFetcher.userAgent)
        if offset > 0, let validator = job.ifRange {
            request.headers.add(name: "Range", value: "bytes=\(offset)-")
            request.headers.add(name: "If-Range", value: validator)
        }
        return try await client.client().execute(request, deadline: .now() + .nanoseconds(Int64(limits.headerTimeout * 1e9)))
    }

    /// A `206` that goes on where the file ends: its `Content-Range` starts at `offset`, and its
    /// validator is the one `If-Range` sent (the entity tag compared strongly, else the date).
    /// A server that ignores `If-Range` answers a changed file's range all the same.
    static func continues(_ job: TransferJob, at offset: Int64, _ headers: HTTPHeaders) -> Bool {
        guard let range = headers.first(name: "Content-Range").flatMap(ContentRange.init), range.start == offset,
              let sent = job.ifRange else { return false }
        if sent == job.validators.entityTag {
            return headers.first(name: "ETag") == sent
        }
        return headers.first(name: "Last-Modified") == sent
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    // MARK: - Private

    /// An HTML or XML page where audio was expected: what the first bytes say, whatever the type.
    static func looksLikeText(_ bytes: Data) -> Bool {
        let start = bytes.prefix(512).drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }
        let text = String(decoding: start.prefix(16), as: UTF8.self).lowercased()
        return text.hasPrefix("<!doctype") || text.hasPrefix("<html") || text.hasPrefix("<?xml") || text.hasPrefix("<head") || text.hasPrefix("<body")
    }

    /// Bytes free for an unprivileged writer on the file system of `part` (its nearest
    /// directory that exists: `Podcasts/<feed>/` is made with the first byte).
    private static func freeSpace(_ part: URL) -> Int64? {
        var directory = part.deletingLastPathComponent()
        var info = statvfs()
        while statvfs(directory.path, &info) != 0 {
            guard errno == ENOENT, directory.path != "/" else { return nil }
            directory.deleteLastPathComponent()
        }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    private func spaceProblem(free: Int64, needed: Int64?) -> String {
        let rest = needed.map { "\($0) bytes to come, " } ?? ""
        return "\(rest)\(free) bytes free on the music directory's file system, and \(minimumFreeSpace) are kept free (--min-free-space)"
    }

    private func onIO<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            io.async { continuation.resume(with: Result { try body() }) }
        }
    }

    private func append(_ bytes: Data, to file: PartFile) async throws {
        try await onIO { try file.append(bytes) }
    }

    private func synchronize(_ file: PartFile) async throws {
        try await onIO { try file.synchronize() }
    }

    private func truncate(_ file: PartFile) async throws {
        try await onIO { try file.truncate() }
    }

    private func remove(_ file: PartFile) async {
        _ = try? await onIO { file.remove() }
    }
}

import AsyncHTTPClient
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LazyHTTP
import Logging
import NIOCore
import NIOHTTP1
import QueuePlayer
import Synchronization

/// One network item's transport: an HTTP(S) response body, read by a Swift task into the
/// item's ``StreamBuffer`` (never on the render thread), with ICY metadata taken out, and
/// connections made again when they fail.
///
/// - **On-demand** (a length, no `icy-metaint`): a dropped connection, a stall
///   (``HTTPStreamingConfiguration/stallTimeout``) or a trickle is resumed with
///   `Range: bytes=N-` and `If-Range` (the first response's `ETag`, else its `Last-Modified`),
///   so the decoder gets every byte once: a `206` must start at N and carry the same
///   validator; a `200` is read from its start and its first N bytes skipped, unless its
///   validator changed (then, as for a `206` of another version, the item fails: the resource
///   changed under us). A seek asks for its byte offset the same way.
/// - **Live** (no length, or `icy-metaint`): `Icy-MetaData: 1` is sent; `icy-name` is the
///   stream's name and each block's `StreamTitle` its title, announced once the audio before
///   it has been taken by the decoder. A block that is text but not well-formed costs its title,
///   not the audio: the first of a connection is a warning in the log, later ones debug lines.
///   A reconnection plays on from the live edge.
///
/// Failures that may pass (a dropped connection, 5xx, timeouts) are tried again after 0.5 s,
/// doubling to 30 s, until ``HTTPStreamingConfiguration/retryTime`` has passed since audio last
/// came, and so is a 404 from a live station that already played (a station restarting: its
/// mount is not back yet); the others (404, 410, not audio, a redirect loop, a certificate, a
/// changed resource) fail the item at once. The task waits for room in the buffer without polling: the decoder's reads
/// wake it (through the buffer's Dispatch source). Memory: the buffer, one body chunk, and one
/// metadata block (at most 4,080 bytes).
///
/// Owner: `state` (a mutex) holds what other threads read (name, title, the observer, the task);
/// the task alone runs the connection and the producer's side of the buffer.
public final class HTTPStreamSource: StreamSource {
    public let url: URL
    public let buffer: StreamBuffer
    private let client: LazyHTTPClient
    private let configuration: HTTPStreamingConfiguration

    private struct State {
        var name: String?
        var title: String?
        var observer: (@Sendable (StreamEvent) -> Void)?
        var task: Task<Void, Never>?
        var closed = false
        /// The producer's wait for room, resumed by the decoder's reads or by ``close()``.
        var roomWaiter: CheckedContinuation<Void, Never>?
        /// Titles not yet announced: the ring position their audio starts at.
        var pendingTitles: [(position: Int, title: String?)] = []
    }

    private let state = Mutex(State())
    private static let wakeQueue = DispatchQueue(label: "queueplayer.stream.wake")

    init(url: URL, client: LazyHTTPClient, configuration: HTTPStreamingConfiguration) {
        self.url = url
        self.client = client
        self.configuration = configuration
        buffer = StreamBuffer(capacity: configuration.bufferCapacity, producerQueue: Self.wakeQueue)
        buffer.setProducerWakeUp { [weak self] in self?.resumeRoomWaiter() }
    }

    public var name: String? { state.withLock { $0.name } }
    public var title: String? { state.withLock { $0.title } }

    public func setObserver(_ observer: @escaping @Sendable (StreamEvent) -> Void) {
        state.withLock { $0.observer = observer }
    }

    public func start() {
        state.withLock { state in
            guard state.task == nil, !state.closed else { return }
            state.task = Task { [weak self] in await self?.run() }
        }
    }

    public func close() {
        let (task, waiter) = state.withLock { state -> (Task<Void, Never>?, CheckedContinuation<Void, Never>?) in
            state.closed = true
            defer { state.roomWaiter = nil }
            return (state.task, state.roomWaiter)
        }
        task?.cancel()
        waiter?.resume()
    }

    private var isClosed: Bool { state.withLock { $0.closed } || Task.isCancelled }

    // MARK: - The task

    /// What the first response said: kept for resuming.
    private struct Resource {
        var length: Int64?
        var isLive = false
        /// `If-Range`'s value: the `ETag`, else the `Last-Modified` date.
        var validator: String?
        var validatorIsEntityTag = false
    }

    private enum Attempt {
        /// The whole resource arrived.
        case ended
        /// A restart was asked for (a seek, the live edge): connect again at once.
        case restart
        /// Worth another try: why. `since`: when the connection began to fail, if before it was
        /// dropped (one too slow had been failing for the whole low-speed window).
        case dropped(String, since: UInt64? = nil)
        /// Never worth another try.
        case failed(DecoderError.Reason)
        /// The source was closed.
        case closed

        /// Dropped because the server sent too little for a whole low-speed window.
        var isTooSlow: Bool {
            if case .dropped(_, let since) = self { return since != nil }
            return false
        }
    }

    private func run() async {
        var resource: Resource?
        // The next byte of the resource the decoder wants (on-demand).
        var offset: Int64 = 0
        var failingSince: UInt64?
        var delay = configuration.firstRetryDelay
        var audioArrived = false
        while !isClosed {
            if let request = buffer.restartRequest {
                offset = resource?.isLive == true ? 0 : request.offset ?? 0
                buffer.acknowledgeRestart(request.epoch)
                state.withLock { $0.pendingTitles.removeAll() }
            }
            audioArrived = false
            let outcome = await attempt(from: offset, resource: &resource, offset: &offset, audioArrived: &audioArrived)
            // Audio that came on a connection dropped as too slow does not make it a working one:
            // a trickle would otherwise renew the retry budget at every reconnection.
            if audioArrived, !outcome.isTooSlow {
                failingSince = nil
                delay = configuration.firstRetryDelay
            }
            switch outcome {
            case .closed:
                return
            case .restart:
                continue
            case .ended:
                buffer.finish()
                notify(.bufferChanged)
                // Nothing more to do unless the decoder seeks.
                guard await waitForRestart() else { return }
            case .failed(let reason):
                buffer.fail(DecoderError(url: url, reason: reason))
                notify(.bufferChanged)
                guard await waitForRestart() else { return }
            case .dropped(let why, let failedSince):
                let now = StreamBuffer.monotonicNow()
                let since = min(failingSince ?? now, failedSince ?? now)
                failingSince = since
                let waited = Double(now - since) / 1e9
                if waited + delay > configuration.retryTime {
                    buffer.fail(DecoderError(url: url, reason: .network("\(why); gave up after retrying for \(Self.seconds(configuration.retryTime)) s")))
                    notify(.bufferChanged)
                    guard await waitForRestart() else { return }
                    failingSince = nil
                    continue
                }
                // A full buffer (a pause) needs no connection until the decoder takes some of it.
                if buffer.freeBytes < buffer.wakeRoom { await waitForRoom(buffer.wakeRoom) }
                try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                delay = min(delay * 2, configuration.longestRetryDelay)
            }
        }
    }

    /// One connection: the request from `from`, the checks of its answer, the body into the buffer.
    private func attempt(from start: Int64, resource: inout Resource?, offset: inout Int64, audioArrived: inout Bool) async -> Attempt {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "User-Agent", value: "queueplayerd")
        request.headers.add(name: "Icy-MetaData", value: "1")
        let resuming = start > 0 && resource?.isLive == false
        if resuming {
            request.headers.add(name: "Range", value: "bytes=\(start)-")
            if let validator = resource?.validator { request.headers.add(name: "If-Range", value: validator) }
        }
        let response: HTTPClientResponse
        do {
            response = try await client.client().execute(request, deadline: .now() + .nanoseconds(Int64(configuration.headTimeout * 1e9)))
        } catch {
            return classify(error, beforeHead: true)
        }
        let code = Int(response.status.code)
        let headers = response.headers
        // What to skip of this body: the bytes already had, when a range was answered whole.
        var skip: Int64 = 0
        switch code {
        case 200:
            if resuming {
                if let known = resource, !sameVersion(known, headers) {
                    return .failed(.network("the resource changed while it played (its validator is not the one the playback started with)"))
                }
                skip = start
            }
        case 206:
            guard resuming, let known = resource else {
                return .failed(.network("the server answered a range that was not asked for (HTTP 206)"))
            }
            let range = headers.first(name: "Content-Range").flatMap(ByteRange.init)
            guard sameVersion(known, headers), range?.start == start else {
                return .failed(.network("the resource changed while it played (the range answered is of another version)"))
            }
        case 404 where resource?.isLive == true:
            // A live station that played and is now not found is a station restarting: icecast
            // answers 404 for a mount until its source is back. Worth another try, as a drop is.
            return .dropped("HTTP \(code) \(response.status.reasonPhrase)")
        case 404, 410:
            return .failed(.network("HTTP \(code) \(response.status.reasonPhrase)"))
        case 408, 429, 500...599:
            return .dropped("HTTP \(code) \(response.status.reasonPhrase)")
        default:
            return .failed(.network("HTTP \(code) \(response.status.reasonPhrase)"))
        }
        if let refusal = Self.refusal(contentType: headers.first(name: "Content-Type")) { return .failed(refusal) }
        let metaint = headers.first(name: "icy-metaint").map { Int($0.trimmingBlanks) }
        if let metaint, !(1...ICYMetadataParser.largestInterval).contains(metaint ?? 0) {
            return .failed(.network("its ICY metadata interval (icy-metaint) is absurd: \(headers.first(name: "icy-metaint") ?? "")"))
        }
        if resource == nil {
            let length = code == 200 ? headers.first(name: "Content-Length").flatMap(Int64.init) : nil
            if let length, length > configuration.maximumResourceSize {
                return .failed(.network("\(length) bytes, more than any sane episode (\(configuration.maximumResourceSize) allowed)"))
            }
            let entityTag = headers.first(name: "ETag")
            var known = Resource(length: length, isLive: metaint != nil || length == nil)
            known.validator = entityTag ?? headers.first(name: "Last-Modified")
            known.validatorIsEntityTag = entityTag != nil
            resource = known
            buffer.describe(length: known.isLive ? nil : length, isLive: known.isLive)
            let name = headers.first(name: "icy-name")
            state.withLock { $0.name = name }
            notify(.described)
        }
        let isLive = resource?.isLive ?? true
        var parser = metaint.flatMap { $0 }.map(ICYMetadataParser.init(interval:))
        var warnedOfMetadata = false
        var position: Int64 = isLive ? 0 : start - skip
        var meter = LowSpeedMeter(bytes: configuration.lowSpeedBytes, seconds: configuration.lowSpeedTime)
        do {
            for try await chunk in response.body {
                if isClosed { return .closed }
                if buffer.restartRequest != nil { return .restart }
                if let slow = meter.count(chunk.readableBytes) {
                    return .dropped("the server sends too slowly (\(slow.why))", since: slow.since)
                }
                let bytes = Array(chunk.readableBytesView)
                // The audio runs and metadata blocks of the chunk, in order.
                var pieces: [ICYMetadataParser.Piece] = []
                if var icy = parser {
                    do {
                        pieces = try icy.split(bytes)
                    } catch ICYMetadataParser.Failure.malformed(let why) {
                        return .failed(.network("\(why): the stream's metadata is malformed"))
                    }
                    parser = icy
                } else {
                    pieces = [.audio(bytes.indices)]
                }
                var waited = false
                for piece in pieces {
                    switch piece {
                    case .audio(let range):
                        let delivery = await deliver(bytes[range], position: &position, skip: skip)
                        if let outcome = delivery.outcome { return outcome }
                        waited = waited || delivery.waited
                    case .title(let title):
                        state.withLock { $0.pendingTitles.append((buffer.producedBytes, title)) }
                    case .malformed(let why):
                        let message: Logger.Message = "\(url.absoluteString): \(why), left out; the audio plays on"
                        if warnedOfMetadata {
                            configuration.logger.debug(message)
                        } else {
                            configuration.logger.warning(message)
                            warnedOfMetadata = true
                        }
                    }
                }
                if position > start || isLive { audioArrived = true }
                if !isLive { offset = max(offset, position) }
                if position > configuration.maximumResourceSize {
                    return .failed(.network("more than \(configuration.maximumResourceSize) bytes, more than any sane episode"))
                }
                meter.resumeAfterWait(waited: waited)
                announceDueTitles()
            }
        } catch {
            if isClosed { return .closed }
            return classify(error)
        }
        if isClosed { return .closed }
        if isLive { return .dropped("the live stream ended") }
        if let length = resource?.length, position < length {
            return .dropped("the connection was cut after \(position) of \(length) bytes")
        }
        return .ended
    }

    /// Writes the audio bytes at resource `position` (skipping those before `skip`) into the
    /// buffer, waiting for room; the first bytes of the resource are checked to be MP3. Says
    /// whether it waited for room (the low-speed meter does not count that time).
    private func deliver(_ bytes: ArraySlice<UInt8>, position: inout Int64, skip: Int64) async -> (outcome: Attempt?, waited: Bool) {
        var data = bytes
        if position < skip {
            let dropped = Int(min(Int64(data.count), skip - position))
            position += Int64(dropped)
            data = data.dropFirst(dropped)
        }
        guard !data.isEmpty else { return (nil, false) }
        if buffer.producedBytes == 0, let refusal = data.withUnsafeBytes({ Self.refusal(firstBytes: $0) }) { return (.failed(refusal), false) }
        var waited = false
        while !data.isEmpty {
            if isClosed { return (.closed, waited) }
            if buffer.restartRequest != nil { return (.restart, waited) }
            let count = data.withUnsafeBytes { buffer.write($0) }
            data = data.dropFirst(count)
            position += Int64(count)
            if count > 0 { notify(.bufferChanged) }
            if !data.isEmpty {
                waited = true
                await waitForRoom(data.count)
            }
        }
        return (nil, waited)
    }

    /// Waits until the buffer has `room` bytes (or its ``StreamBuffer/wakeRoom``), a restart is asked for, or the source closes.
    private func waitForRoom(_ room: Int) async {
        while !isClosed && buffer.restartRequest == nil && buffer.freeBytes < min(room, buffer.wakeRoom) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = state.withLock { state -> Bool in
                    if state.closed { return true }
                    state.roomWaiter = continuation
                    return false
                }
                if closed || !buffer.producerWillWait(forRoom: room) { resumeRoomWaiter(orElse: closed ? continuation : nil) }
            }
            announceDueTitles()
        }
        buffer.producerHasRoom()
    }

    /// After the end or a failure: waits for the decoder to ask for a restart (a seek); false if closed.
    private func waitForRestart() async -> Bool {
        while !isClosed {
            if buffer.restartRequest != nil { return true }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = state.withLock { state -> Bool in
                    if state.closed { return true }
                    state.roomWaiter = continuation
                    return false
                }
                if closed || !buffer.producerWillWaitForRestart() { resumeRoomWaiter(orElse: closed ? continuation : nil) }
            }
            announceDueTitles()
        }
        return false
    }

    private func resumeRoomWaiter(orElse fallback: CheckedContinuation<Void, Never>? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.roomWaiter = nil }
            return state.roomWaiter
        }
        if let waiter { waiter.resume() } else { fallback?.resume() }
    }

    /// Announces the titles whose audio the decoder has reached.
    private func announceDueTitles() {
        let consumed = buffer.consumedBytes
        let due = state.withLock { state -> String?? in
            var latest: String??
            while let first = state.pendingTitles.first, first.position <= consumed {
                latest = .some(first.title)
                state.pendingTitles.removeFirst()
            }
            if let latest { state.title = latest }
            return latest
        }
        if due != nil { notify(.titleChanged) }
    }

    private func notify(_ event: StreamEvent) {
        state.withLock { $0.observer }?(event)
    }

    // MARK: - Checks

    /// True if `headers` carry the validator the playback started with (an entity tag compared
    /// strongly, else the date); a resource without one cannot be told changed.
    private func sameVersion(_ known: Resource, _ headers: HTTPHeaders) -> Bool {
        guard let validator = known.validator else { return true }
        let now = known.validatorIsEntityTag ? headers.first(name: "ETag") : headers.first(name: "Last-Modified")
        return now == validator
    }

    /// The response's type, if it says this is not MP3.
    static func refusal(contentType: String?) -> DecoderError.Reason? {
        guard let type = contentType?.lowercased().split(separator: ";").first?.trimmingBlanks else { return nil }
        if type.hasPrefix("text/") || type.contains("html") || type.contains("xml") || type.contains("json") {
            return .unsupportedFormat("the server sent \(type), not audio")
        }
        if type.contains("ogg") || type.contains("opus") || type.contains("vorbis") { return .unsupportedFormat("it is an Ogg stream (\(type))") }
        if type.contains("aac") || type.contains("mp4") || type.contains("m4a") { return .unsupportedFormat("it is an AAC stream (\(type))") }
        if type.contains("flac") || type.contains("wav") { return .unsupportedFormat("it is \(type)") }
        return nil
    }

    /// The first bytes, if they say this is not MP3 (whatever the type said).
    static func refusal(firstBytes bytes: UnsafeRawBufferPointer) -> DecoderError.Reason? {
        let head = Array(bytes.prefix(512))
        if head.starts(with: Array("OggS".utf8)) { return .unsupportedFormat("it is an Ogg stream") }
        if head.starts(with: Array("fLaC".utf8)) { return .unsupportedFormat("it is a FLAC stream") }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xF6 == 0xF0 { return .unsupportedFormat("it is an AAC (ADTS) stream") }
        let text = String(decoding: head.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }.prefix(16), as: UTF8.self).lowercased()
        if text.hasPrefix("<!doctype") || text.hasPrefix("<html") || text.hasPrefix("<?xml") || text.hasPrefix("<head") || text.hasPrefix("<body") {
            return .unsupportedFormat("the body is an HTML or XML page, not audio")
        }
        return nil
    }

    /// An error of the client, as an outcome.
    private func classify(_ error: any Error, beforeHead: Bool = false) -> Attempt {
        if isClosed { return .closed }
        if let error = error as? HTTPClientError {
            switch error {
            case .redirectCycleDetected: return .failed(.network("a redirect loop"))
            case .redirectLimitReached: return .failed(.network("more than \(configuration.maximumRedirects) redirects"))
            case .deadlineExceeded: return .dropped("no answer within \(Self.seconds(configuration.headTimeout)) s")
            case .readTimeout where beforeHead: return .dropped("no answer within \(Self.seconds(configuration.stallTimeout)) s")
            case .readTimeout: return .dropped("no data for \(Self.seconds(configuration.stallTimeout)) s")
            case .connectTimeout: return .dropped("could not connect within \(Self.seconds(configuration.connectTimeout)) s")
            case .remoteConnectionClosed: return .dropped("the server closed the connection")
            default: break
            }
        }
        let text = String(describing: error)
        if let why = Self.tlsFailure(text) { return .failed(.network(why)) }
        if text.contains("connectionRefused") || text.contains("Connection refused") || text.contains("ECONNREFUSED") {
            return .dropped("the connection was refused")
        }
        return .dropped("the connection failed: \(text)")
    }

    /// A TLS failure's why, from the description of NIOSSL's error (AsyncHTTPClient passes it
    /// through): BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`, `WRONG_VERSION_NUMBER`)
    /// without the source file and line of the library's build that come with it; nil if
    /// `text` is not a TLS failure.
    static func tlsFailure(_ text: String) -> String? {
        let certificate = text.contains("certificate") || text.contains("CERTIFICATE")
        guard certificate || text.contains("handshake") || text.contains("NIOSSL") || text.contains("BoringSSL") else { return nil }
        guard let match = text.firstMatch(of: /OPENSSL_internal:([A-Z0-9_]+)/) else {
            return certificate ? "its TLS certificate does not verify (\(text))" : "the TLS handshake failed (\(text))"
        }
        let reason = String(match.1)
        return reason.contains("CERTIFICATE") ? "its TLS certificate does not verify (\(reason))" : "the TLS handshake failed (\(reason))"
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A `Content-Range: bytes START-END/TOTAL` header.
struct ByteRange {
    let start: Int64
    let total: Int64?

    init?(_ header: String) {
        guard let match = header.wholeMatch(of: #/\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*/#), let start = Int64(match.1) else { return nil }
        self.start = start
        total = Int64(match.3)
    }
}

/// curl's low-speed limit: fewer than `bytes` over `seconds` of reading is too slow. The
/// time spent waiting for room in the buffer does not count.
struct LowSpeedMeter {
    private let bytes: Int
    private let window: UInt64
    private var windowStart = StreamBuffer.monotonicNow()
    private var counted = 0

    init(bytes: Int, seconds: Double) {
        self.bytes = bytes
        window = UInt64(seconds * 1e9)
    }

    /// Counts a chunk; says how slow it was, and since when, if the window ended below the limit.
    mutating func count(_ size: Int) -> (why: String, since: UInt64)? {
        counted += size
        let now = StreamBuffer.monotonicNow()
        guard now - windowStart >= window else { return nil }
        defer { windowStart = now; counted = 0 }
        if counted < bytes { return ("\(counted) bytes in \(Int((Double(now - windowStart) / 1e9).rounded())) s", windowStart) }
        return nil
    }

    /// Starts a new window after waiting for room.
    mutating func resumeAfterWait(waited: Bool) {
        if waited {
            windowStart = StreamBuffer.monotonicNow()
            counted = 0
        }
    }
}


import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Fixes from gpsd: a TCP connection (default localhost:2947), `?WATCH={"enable":true,"json":true}`,
/// and its `TPV` reports (``GPSDReport``).
///
/// - Power: with ``SamplingPolicy/continuous`` it watches all along (every report wakes the
///   process: a TPV, SKY and GST per epoch). With ``SamplingPolicy/every(_:)`` it switches the
///   watch off once a fix has come, and on again when the next is due: in between gpsd sends
///   nothing and the connection wakes nobody (``wakeUpCount`` counts the wake-ups).
/// - Outages: no gpsd, a refused or silent connection (no banner within 5 s), gpsd going away:
///   one ``LocationSourceEvent/unavailable(_:)`` per outage, then attempts again after 0.5 s,
///   doubling to 30 s; the back-off starts over once gpsd has answered with its banner.
/// - Input: lines of at most 16 KiB (``GPSDLineBuffer``); anything else (garbage, non-gpsd JSON,
///   an overlong line) is a ``LocationSourceEvent/dropped(_:)``. Reading never blocks (the
///   socket is non-blocking; a dispatch read source says when there is something to read).
///
/// `@unchecked Sendable`: every mutable thing (the socket, its dispatch sources, the timers,
/// the line buffer, the handler) is in ``State``, owned by the serial queue `location.gpsd`;
/// every access goes through ``state``, which asserts that queue (`dispatchPrecondition`).
/// Public methods hop onto it. The host name is resolved there too (`getaddrinfo` may wait for
/// DNS: only this source's queue waits).
public final class GPSDLocationSource: LocationSource, @unchecked Sendable {
    public static let defaultHost = "localhost"
    public static let defaultPort: UInt16 = 2947

    public let host: String
    public let port: UInt16

    private struct State {
        var handler: (@Sendable (LocationSourceEvent) -> Void)?
        var sampling: SamplingPolicy?
        var descriptor: Int32 = -1
        var reader: (any DispatchSourceRead)?
        var lines = GPSDLineBuffer()
        /// gpsd sent its banner on this connection.
        var answered = false
        var watching = false
        var backOff = 0.5
        var retry: (any DispatchSourceTimer)?
        var nextSample: (any DispatchSourceTimer)?
        var answerDeadline: (any DispatchSourceTimer)?
        /// An outage was reported and gpsd has not answered since.
        var outageReported = false
    }

    private let queue = DispatchQueue(label: "location.gpsd")
    private var unguardedState = State()
    private var state: State {
        get {
            dispatchPrecondition(condition: .onQueue(queue))
            return unguardedState
        }
        _modify {
            dispatchPrecondition(condition: .onQueue(queue))
            yield &unguardedState
        }
    }
    private let wakeUps = Atomic<Int>(0)

    public init(host: String = GPSDLocationSource.defaultHost, port: UInt16 = GPSDLocationSource.defaultPort) {
        self.host = host
        self.port = port
    }

    /// A source let go without ``stop()``: its socket is closed (by the read source's cancel
    /// handler) and its timers go. No other reference is left, so no queue can be in it.
    deinit {
        unguardedState.reader?.cancel()
        for timer in [unguardedState.retry, unguardedState.nextSample, unguardedState.answerDeadline] { timer?.cancel() }
    }

    /// How often the source's queue has woken for the connection or a timer since it was made:
    /// what ``LocationAccuracy/sampleInterval`` saves.
    public var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }

    public func start(sampling: SamplingPolicy, handler: @escaping @Sendable (LocationSourceEvent) -> Void) {
        queue.async { [self] in
            let previous = state.sampling
            state.handler = handler
            state.sampling = sampling
            if previous == nil {
                state.backOff = 0.5
                connect()
            } else if previous != sampling {
                // A new interval counts from a fix taken now, not from the old interval's end.
                state.nextSample?.cancel()
                state.nextSample = nil
                applySampling()
            }
        }
    }

    public func stop() {
        queue.async { [self] in
            state.sampling = nil
            state.handler = nil
            state.retry?.cancel()
            state.retry = nil
            disconnect()
        }
    }

    // MARK: - The connection

    private func connect() {
        guard state.sampling != nil, state.descriptor < 0 else { return }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var addresses: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &addresses)
        guard status == 0, let first = addresses else {
            return failed("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(addresses) }
        let descriptor = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return failed("socket: \(String(cString: strerror(errno)))") }
        if Glibc.connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
            let why = String(cString: strerror(errno))
            close(descriptor)
            return failed("cannot connect to \(host):\(port): \(why)")
        }
        state.descriptor = descriptor
        state.answered = false
        state.watching = false
        state.lines.reset()
        let reader = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        reader.setEventHandler { [weak self] in self?.readAvailable() }
        // The descriptor is closed only once dispatch has stopped watching it.
        reader.setCancelHandler { close(descriptor) }
        state.reader = reader
        reader.resume()
        state.answerDeadline = timer(after: 5) { source in
            if !source.state.answered { source.failed("no answer from \(source.host):\(source.port) within 5 s") }
        }
    }

    private func readAvailable() {
        wakeUps.add(1, ordering: .relaxed)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while state.descriptor >= 0 {
            let count = buffer.withUnsafeMutableBytes { read(state.descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { bytes in
                    let bytes = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                    var pieces: [GPSDLineBuffer.Piece] = []
                    state.lines.append(bytes) { pieces.append($0) }
                    for piece in pieces { take(piece) }
                }
                if count < buffer.count { return }
            } else if count == 0 {
                return failed(state.answered ? "gpsd at \(host):\(port) closed the connection"
                                             : "cannot connect to \(host):\(port): closed before gpsd's banner")
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                // A refused connection shows here, as the first read of a non-blocking connect.
                return failed("cannot \(state.answered ? "read from" : "connect to") \(host):\(port): \(String(cString: strerror(errno)))")
            }
        }
    }

    private func take(_ piece: GPSDLineBuffer.Piece) {
        switch piece {
        case .overlong(let length):
            emit(.dropped("gpsd line of \(length) bytes dropped (at most \(state.lines.maximumLength))"))
        case .line(let line):
            guard !line.isEmpty else { return }
            switch GPSDReport.parse(line) {
            case .version(let release):
                state.answered = true
                state.answerDeadline?.cancel()
                state.answerDeadline = nil
                state.backOff = 0.5
                if state.outageReported {
                    state.outageReported = false
                    emit(.available("gpsd \(release) at \(host):\(port) answers again"))
                } else {
                    emit(.available("gpsd \(release) at \(host):\(port)"))
                }
                applySampling()
            case .location(let location):
                emit(.location(location))
                if case .every(let seconds) = state.sampling, state.watching {
                    // The fix this sample wanted: silence until the next one is due.
                    send(#"?WATCH={"enable":false};"#)
                    state.watching = false
                    state.nextSample?.cancel()
                    state.nextSample = timer(after: seconds) { source in
                        source.state.nextSample = nil
                        source.applySampling()
                    }
                }
            case .noFix:
                emit(.noFix)
            case .other:
                break
            case .malformed(let why):
                let text = String(decoding: line.prefix(80), as: UTF8.self)
                emit(.dropped("gpsd line dropped: \(why): \(text.debugDescription)"))
            }
        }
    }

    /// Watches as the sampling asks: at once when continuous, or when a sample is due.
    private func applySampling() {
        guard state.answered, let sampling = state.sampling, !state.watching else { return }
        if case .every = sampling, state.nextSample != nil { return }
        if case .continuous = sampling {
            state.nextSample?.cancel()
            state.nextSample = nil
        }
        send(#"?WATCH={"enable":true,"json":true};"#)
        state.watching = true
    }

    private func send(_ command: String) {
        guard state.descriptor >= 0 else { return }
        // A few dozen bytes on a connected socket: the kernel takes them whole. MSG_NOSIGNAL:
        // a gpsd that has gone is a failed read, not a SIGPIPE.
        let sent = command.utf8CString.withUnsafeBytes { Glibc.send(state.descriptor, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
        if sent < 0 { failed("cannot write to \(host):\(port): \(String(cString: strerror(errno)))") }
    }

    /// The connection failed or ended: report the outage once, and try again after the back-off.
    private func failed(_ why: String) {
        disconnect()
        guard state.sampling != nil else { return }
        if !state.outageReported {
            state.outageReported = true
            emit(.unavailable(why))
        } else {
            emit(.dropped("still no gpsd: \(why)"))
        }
        let delay = state.backOff
        state.backOff = min(state.backOff * 2, 30)
        state.retry?.cancel()
        state.retry = timer(after: delay) { source in
            source.state.retry = nil
            source.connect()
        }
    }

    private func disconnect() {
        state.answerDeadline?.cancel()
        state.answerDeadline = nil
        state.nextSample?.cancel()
        state.nextSample = nil
        state.reader?.cancel()
        state.reader = nil
        state.descriptor = -1
        state.answered = false
        state.watching = false
        state.lines.reset()
    }

    private func emit(_ event: LocationSourceEvent) {
        state.handler?(event)
    }

    /// A one-shot timer on the source's queue.
    private func timer(after seconds: Double, _ body: @escaping @Sendable (GPSDLocationSource) -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + seconds, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            wakeUps.add(1, ordering: .relaxed)
            body(self)
        }
        timer.resume()
        return timer
    }
}

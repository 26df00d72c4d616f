import DaemonCore
import Dispatch
import Logging
import MPDProtocol
import NIOCore
import QueuePlayer
import NIOWebSocket
import Synchronization

/// One WebSocket client of the API at `/ws`: its outbound buffer, its time subscriptions, and
/// its commands, which run through a ``ClientSession`` of its own on the partition's queue, as a
/// control-socket client's do.
///
/// Threads: ``send(_:)`` is called from anywhere (the clock thread with a tick, the partition's
/// queue with an idle event, the client's task with an answer) and never blocks: it hands the
/// frame to the channel's event loop (`execute`: a lock held for an append), which writes and
/// flushes it. No task in between: a tick went from the clock thread to a Swift task's thread
/// and only then to the event loop, one thread's wake-up more on its way. A client
/// that does not read fills its socket, then NIO's buffer; the messages handed over and not yet
/// written to the socket are counted (``pending``), and at ``outboundLimit`` the client is
/// dropped: its channel is closed, and nothing else (the clock thread, playback, other clients)
/// waits for it. Messages are written in the order `send` was called in, from any one thread.
///
/// Permissions are the control socket's (``AccessPolicy``): a client starts with what a trusted
/// TCP client gets (`--default-permissions`, everything when no password is set) and a `password`
/// command replaces them with that password's. Without `read` it is sent no events
/// (``push(_:)``: no `idle`, current item, downloads or location) and may not subscribe to time,
/// as an mpd client without `read` may not `idle` or ask `status`; what a client is sent on
/// connecting (``sendStartingState()``) it is sent once it may read.
///
/// The command session is the client's task's alone (``run(commandLine:)`` is called by one task,
/// one message after another), and so is lent to the partition's queue and taken back.
/// Subscriptions are under a mutex; the player's observers are added and removed on
/// ``observerQueue`` (the player's calls may wait for its control queue, which must not hold up
/// a Swift task's thread or the event loop).
final class WebSocketClient: Sendable {
    /// Messages waiting for the socket, at most; past it the client is dropped.
    static let outboundLimit = 512
    /// Subscriptions one client may hold (time and boundary together).
    static let subscriptionLimit = 32

    let id: Int
    private let channel: any Channel
    /// Messages handed to the event loop and not yet written to the socket.
    private let pending = Atomic<Int>(0)
    /// Set once the client is dropped or gone: nothing more is handed over.
    private let isDropped = Atomic<Bool>(false)
    /// Whether the session holds `read`: events are pushed only then. Set by the client's task
    /// after each command (a `password` may grant it), read by whichever thread pushes.
    private let mayRead: Atomic<Bool>
    /// Sends what a client gets on connecting (the downloads' list, the location's history).
    private let startingState: @Sendable (WebSocketClient) -> Void
    /// The daemon as the client's commands and subscriptions use it.
    private let environment: ClientEnvironment
    private var playback: any PublishedPlayback { environment.playback }
    private var player: QueuePlayer { environment.playback.player }
    private let logger: Logger

    private struct Subscription {
        enum Kind { case time, boundary }
        let kind: Kind
        let tokens: [TimeObserverToken]
    }

    private struct State {
        var subscriptions: [Int: Subscription] = [:]
        var nextSubscription = 1
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Where observers are added and removed: a queue of its own, not the queue their blocks run
    /// on (``tickQueue``), which the clock thread holds while it delivers.
    static let observerQueue = DispatchQueue(label: "queueplayerd.web.observers")
    /// Where the blocks of every web client's time observers run (on the clock thread, holding it).
    static let tickQueue = DispatchQueue(label: "queueplayerd.web.ticks")

    /// `permissions`: what the client's session holds at first (its ``ClientSession/permissions``);
    /// `startingState` pushes what a client gets on connecting (``sendStartingState()``).
    init(id: Int, channel: any Channel, environment: ClientEnvironment,
         permissions: Permission, logger: Logger, startingState: @escaping @Sendable (WebSocketClient) -> Void) {
        self.id = id
        mayRead = Atomic(permissions.contains(.read))
        self.startingState = startingState
        self.channel = channel
        self.environment = environment
        self.logger = logger
    }

    // MARK: Output

    /// Queues a message for the client; drops the client if its buffer is full. Never blocks.
    func send(_ message: JSONValue) {
        send(text: message.encoded)
    }

    func send(text: String) {
        guard !isDropped.load(ordering: .relaxed) else { return }
        guard pending.wrappingAdd(1, ordering: .relaxed).newValue <= Self.outboundLimit else {
            overflowed()
            return
        }
        let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
        channel.eventLoop.execute { [self] in
            // On the loop: the write's promise is completed there too, so its callback runs inline.
            channel.writeAndFlush(frame).whenComplete { [self] _ in pending.wrappingSubtract(1, ordering: .relaxed) }
        }
    }

    /// Queues an event the client did not ask for (an `idle` change, the current item, a
    /// download's progress, a fix, a tick): sent only while the client may read. Never blocks.
    func push(_ message: JSONValue) {
        guard mayRead.load(ordering: .relaxed) else { return }
        send(message)
    }

    /// ``push(_:)`` of a message already encoded.
    func push(text: String) {
        guard mayRead.load(ordering: .relaxed) else { return }
        send(text: text)
    }

    /// What a client gets on connecting, if it may read now (else when a password lets it).
    func sendStartingState() {
        if mayRead.load(ordering: .relaxed) { startingState(self) }
    }

    private func overflowed() {
        guard !isDropped.exchange(true, ordering: .relaxed) else { return }
        state.withLock { $0.isClosed = true }
        logger.warning("web client \(id): \(Self.outboundLimit) messages unread; disconnected")
        channel.close(promise: nil)
    }

    // MARK: Requests

    /// Answers one text message.
    func handle(_ text: String, session: inout ClientSession) async {
        let request: WebRequest
        do {
            request = try WebRequest.parse(text)
        } catch {
            send(answer(id: error.id, .object([("error", ReplyJSON.error(ack: error.ack, message: error.message))])))
            return
        }
        switch request.action {
        case .command(let line):
            let reply = await run(commandLine: line, session: &session)
            // Before the answer: a client told its password worked is pushed what follows, and
            // first what it would have been sent on connecting.
            let mayReadNow = session.permissions.contains(.read)
            let mightRead = mayRead.exchange(mayReadNow, ordering: .relaxed)
            if mayReadNow && !mightRead { startingState(self) }
            send(answer(id: request.id, reply))
        case .subscribeTime where !session.permissions.contains(.read),
             .subscribeBoundary where !session.permissions.contains(.read):
            send(answer(id: request.id, Self.noPermissionToSubscribe))
        case .subscribeTime(let interval):
            send(answer(id: request.id, await subscribeTime(interval: interval)))
        case .subscribeBoundary(let times):
            send(answer(id: request.id, await subscribeBoundary(times: times)))
        case .unsubscribe(let which):
            send(answer(id: request.id, unsubscribe(which)))
        }
    }

    /// A subscription asked for without `read`: the error mpd gives a command the client may not run.
    private static let noPermissionToSubscribe: JSONValue = {
        let refusal = Permission.refusal(of: "subscribe")
        return .object([("error", ReplyJSON.error(ack: refusal.code, command: refusal.command, message: refusal.message))])
    }()

    /// `{"id": ..., "ok"/"error": ...}`: the answer's fields after the id, when there is one.
    private func answer(id: JSONValue?, _ body: JSONValue) -> JSONValue {
        guard let id, case .object(let fields) = body else { return body }
        return .object([("id", id)] + fields)
    }

    /// Runs one MPD command line as the control socket would, and answers it as JSON.
    func run(commandLine line: String, session: inout ClientSession) async -> JSONValue {
        let name = String(line.prefix { $0 != " " && $0 != "\t" })
        // The events come unasked, and a command list or a close is the connection's framing,
        // which JSON messages replace (the command table says which lines these are).
        if Command.namesNotTakenOverWebSocket.contains(name) {
            return .object([("error", ReplyJSON.error(ack: .unknown, command: name,
                                                      message: "\(name) is not taken over the WebSocket (docs/websocket.md)"))])
        }
        session.append(Array(line.utf8) + [UInt8(ascii: "\n")])
        var actions: [SessionAction] = []
        steps: while true {
            switch session.step() {
            case .needsInput:
                break steps
            case .handled(let handled):
                actions += handled
            case .ready(let needsExecutor):
                let back = await environment.runner.lend(session, needsExecutor: needsExecutor, on: channel.eventLoop)
                // A wrong password's answer after the wait ``AccessPolicy`` says: the client's
                // task sleeps, and its next message is read after it.
                if let delay = back.delay { try? await Task.sleep(for: .seconds(delay)) }
                session = back.session
                actions += back.actions
            }
        }
        for failed in session.takeFailedCommands() {
            logger.debug("web client \(id): command \"\(failed.line)\" failed: \(failed.ack)")
        }
        return ReplyJSON.answer(command: name, actions: actions)
    }

    // MARK: Subscriptions

    private func subscribeTime(interval: Double) async -> JSONValue {
        guard let number = reserveSubscription() else { return tooManySubscriptions() }
        let (player, playback) = (player, playback)
        let token = await onObserverQueue {
            player.addPeriodicTimeObserver(forInterval: MediaTime(seconds: interval), queue: Self.tickQueue) { [weak self] time in
                // Nothing while paused or waiting: the observer also reports the position once
                // when playback stops, which a subscriber must not take for a tick.
                guard let self, player.timeControlStatus == .playing, let item = player.currentItem else { return }
                push(text: Self.tick(subscription: number, songID: playback.songID(of: item), elapsed: time.seconds))
            }
        }
        return installed(number, Subscription(kind: .time, tokens: [token]), kind: "time")
    }

    private func subscribeBoundary(times: [Double]) async -> JSONValue {
        guard let number = reserveSubscription() else { return tooManySubscriptions() }
        let (player, playback) = (player, playback)
        // One observer per time, so that each push names the time it crossed.
        let tokens = await onObserverQueue {
            times.map { time in
                player.addBoundaryTimeObserver(forTimes: [MediaTime(seconds: time)], queue: Self.tickQueue) { [weak self] in
                    guard let self else { return }
                    let songID = player.currentItem.flatMap { playback.songID(of: $0) }
                    push(.object([("event", .string("boundary")), ("subscription", .int(number)), ("time", .double(time)),
                                  ("songid", songID.map { .int($0) } ?? .null)]))
                }
            }
        }
        return installed(number, Subscription(kind: .boundary, tokens: tokens), kind: "boundary")
    }

    /// `{"event":"time","subscription":1,"songid":3,"elapsed":12.34,"state":"play"}`, built as
    /// plain text: it is made on the clock thread, for every tick.
    static func tick(subscription: Int, songID: Int?, elapsed: Double) -> String {
        // One allocation: the text's room reserved, the numbers written as digits (no
        // `String(format:)`, which costs a Foundation call and its own allocations per tick).
        var text = ""
        text.reserveCapacity(96)
        text += "{\"event\":\"time\",\"subscription\":"
        text += String(subscription)
        text += ",\"songid\":"
        text += songID.map(String.init) ?? "null"
        text += ",\"elapsed\":"
        appendFixed4(elapsed, to: &text)
        text += ",\"state\":\"play\"}"
        return text
    }

    /// `value` rounded to 0.1 ms, as ``JSONValue/number(_:)`` writes it (`12.34`, `10`, `-0.5`).
    static func appendFixed4(_ value: Double, to text: inout String) {
        let scaled = (value * 10_000).rounded()
        guard scaled.isFinite, abs(scaled) < 9e15 else {
            text += JSONValue.number(value)
            return
        }
        var units = Int64(scaled)
        if units < 0 {
            text += "-"
            units = -units
        }
        text += String(units / 10_000)
        var fraction = units % 10_000
        guard fraction != 0 else { return }
        var digits = 4
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        text += "."
        let shown = String(fraction)
        if shown.utf8.count < digits { text += String(repeating: "0", count: digits - shown.utf8.count) }
        text += shown
    }

    /// Takes a subscription number, or nil when the client holds as many as it may.
    private func reserveSubscription() -> Int? {
        state.withLock { state in
            guard !state.isClosed, state.subscriptions.count < Self.subscriptionLimit else { return nil }
            defer { state.nextSubscription += 1 }
            return state.nextSubscription
        }
    }

    private func tooManySubscriptions() -> JSONValue {
        .object([("error", ReplyJSON.error(ack: .argument, message: "at most \(Self.subscriptionLimit) subscriptions per client"))])
    }

    /// Keeps the observers of a new subscription, unless the client went meanwhile.
    private func installed(_ number: Int, _ subscription: Subscription, kind: String) -> JSONValue {
        let kept = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.subscriptions[number] = subscription
            return true
        }
        if !kept { remove([subscription]) }
        return .object([("ok", .object([("subscription", .int(number)), ("subscribe", .string(kind))]))])
    }

    private func unsubscribe(_ which: WebRequest.Unsubscribe) -> JSONValue {
        let removed = state.withLock { state -> [Int: Subscription] in
            let chosen = state.subscriptions.filter { number, subscription in
                switch which {
                case .subscription(let wanted): number == wanted
                case .allTime: subscription.kind == .time
                case .allBoundary: subscription.kind == .boundary
                case .all: true
                }
            }
            for number in chosen.keys { state.subscriptions.removeValue(forKey: number) }
            return chosen
        }
        if case .subscription(let wanted) = which, removed.isEmpty {
            return .object([("error", ReplyJSON.error(ack: .noExist, message: "no subscription \(wanted)"))])
        }
        remove(Array(removed.values))
        return .object([("ok", .object([("unsubscribed", .array(removed.keys.sorted().map { .int($0) }))]))])
    }

    /// Ends the client: its subscriptions go and nothing more is sent.
    func close() {
        let subscriptions = state.withLock { state -> [Subscription] in
            state.isClosed = true
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        isDropped.store(true, ordering: .relaxed)
        remove(subscriptions)
    }

    /// Removes the observers on ``observerQueue``: removal waits for a call running on another
    /// thread, and for the player's control queue. The tokens are released there too (a token
    /// released elsewhere would remove its observer where it was released).
    private func remove(_ subscriptions: [Subscription]) {
        guard !subscriptions.isEmpty else { return }
        let player = player
        let tokens = subscriptions.flatMap(\.tokens)
        Self.observerQueue.async {
            for token in tokens { player.removeTimeObserver(token) }
        }
    }

    private func onObserverQueue<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { done in
            Self.observerQueue.async { done.resume(returning: body()) }
        }
    }
}

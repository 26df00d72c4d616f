import Dispatch
import Foundation
import Synchronization

/// A player of a queue of items, shaped like AVFoundation's `AVQueuePlayer`.
///
/// Items play one after another through an ``AudioSink`` without a sample
/// added or lost between them. `currentItem`, `rate`, `timeControlStatus` and
/// `queuedItems` can be observed with ``observe(_:options:changeHandler:)``;
/// time observers report the *audible* position.
///
/// Every change is made on one internal serial queue, `controlQueue`
/// (`queueplayer.control`), which owns the player's state (``ControlState``: the timeline,
/// the opened head), reached only through ``control``, which checks that it runs there; the
/// published properties are also read from other threads, under the `published` mutex, and
/// what a playing tick needs (the observers' schedule, the timer, the span heard) is shared
/// with the clock thread under the mutex of ``PlayerTick`` (``TickShare``). Observation handlers run on
/// `controlQueue`. The public methods may be called from any thread, including from those
/// handlers.
public final class QueuePlayer: KeyValueObservable, Sendable {
    /// What happens when an item plays to its end.
    public enum ActionAtItemEnd: Sendable, Hashable {
        /// Continue with the next item (the default for a queue player).
        case advance
        /// Pause, staying on the item at its end.
        case pause
        /// Do nothing: stay on the item at its end.
        case none
    }

    /// Whether playback is under way.
    public enum TimeControlStatus: Sendable, Hashable {
        case paused
        case waitingToPlayAtSpecifiedRate
        case playing
    }

    /// Why the player waits while its rate is not zero.
    public enum WaitingReason: Sendable, Hashable {
        /// The queue is empty; inserting an item starts playback.
        case noItemToPlay
        /// The output cannot be opened just now; the player retries.
        case outputUnavailable
        /// A network item's buffer ran dry while it played: the player waits until it is
        /// likely to keep up (``PlayerItem/isPlaybackLikelyToKeepUp``), or for any data when
        /// ``QueuePlayer/automaticallyWaitsToMinimizeStalling`` is false.
        case toMinimizeStalls
        /// A network item waits for its first audio (connecting, buffering).
        case evaluatingBufferingRate
    }

    /// Posted (object: the player) when the output fails, once per outage: it cannot be
    /// opened, or it died under a write (what it held is lost; playback will go on from
    /// where it was audible). The player waits (``WaitingReason/outputUnavailable``) and
    /// retries opening it, 100 ms after the failure and then less and less often, down to
    /// once every 800 ms.
    public static let outputDidFailNotification = Notification.Name("QueuePlayerOutputDidFail")

    /// Posted (object: the player) when the output opens again after
    /// ``outputDidFailNotification``; playback goes on from where it was audible.
    public static let outputDidRecoverNotification = Notification.Name("QueuePlayerOutputDidRecover")

    /// Posted (object: the player, userInfo[``underrunCountKey``]: the total so far) when
    /// the output ran dry (the player was starved: a stalled process, a loaded machine,
    /// a stopped sound server) and was restarted; playback went on from where it was.
    public static let outputDidRecoverFromUnderrunsNotification = Notification.Name("QueuePlayerOutputDidRecoverFromUnderruns")
    /// The `userInfo` key of the underrun total (an `Int`) in ``outputDidRecoverFromUnderrunsNotification``.
    public static let underrunCountKey = "QueuePlayerUnderrunCount"

    /// How many underruns the output has recovered from since the player was made.
    public var outputUnderruns: Int { sink.underruns }

    // MARK: Observable state (readable from any thread)

    struct Published {
        var items: [PlayerItem] = []
        var currentItem: PlayerItem?
        var rate: Float = 0
        var defaultRate: Float = 1
        var timeControlStatus: TimeControlStatus = .paused
        var reasonForWaitingToPlay: WaitingReason?
        var actionAtItemEnd: ActionAtItemEnd = .advance
    }

    private let published = Mutex(Published())
    public let observationRegistry = ObservationRegistry()

    /// The item being heard (the head of the queue), or nil. Observable.
    public var currentItem: PlayerItem? { published.withLock { $0.currentItem } }
    /// The playback rate, as `AVPlayer.rate`: 0 when paused; otherwise the rate playback is
    /// wanted at, in item time per second (1 as recorded, 2 twice as fast). Setting a rate other
    /// than 0 plays at it, setting 0 pauses. A rate outside ``supportedRates`` is clamped to it;
    /// a negative or non-finite rate is ignored (nothing plays backwards). At 1 the audio is as
    /// decoded; at other rates it goes through the time-stretcher, as each item's
    /// ``PlayerItem/audioTimePitchAlgorithm`` says, and the change is heard within the output's
    /// buffer. Time stays the item's own (``currentTime()``, seeks, observers). Observable, and
    /// each change is posted as ``rateDidChangeNotification``.
    public var rate: Float {
        get { published.withLock { $0.rate } }
        set { setRate(newValue) }
    }
    /// The rate ``play()`` plays at (`AVPlayer.defaultRate`), 1 unless set; clamped to
    /// ``supportedRates`` (a negative, zero or non-finite value is ignored). Setting it does not
    /// change the rate of a player that plays.
    public var defaultRate: Float {
        get { published.withLock { $0.defaultRate } }
        set {
            guard let rate = Self.supportedRate(newValue), rate != 0 else { return }
            published.withLock { $0.defaultRate = rate }
        }
    }
    /// Skip silence (an extension: AVFoundation has none; Overcast's Smart Speed): a stretch
    /// quieter than −50 dBFS lasting 1 s or more is shortened to its first and last 0.15 s,
    /// nothing louder is touched. The time stays the item's: what is cut is skipped, as by a
    /// seek, and counted in ``PlayerItem/silenceSkipped``. An item's own
    /// ``PlayerItem/skipsSilence`` wins over this. Off by default.
    public var skipsSilence: Bool {
        get { renderer.skipsSilence.load(ordering: .relaxed) }
        set {
            // Its buffers are made off the render path, before the chunk that needs them.
            if newValue { renderer.mailbox.post(.preparePace) }
            renderer.skipsSilence.store(newValue, ordering: .relaxed)
        }
    }

    /// The rates other than 0 the player plays at.
    public static let supportedRates: ClosedRange<Float> = 0.5...3.0

    /// Posted (object: the player) after each change of ``rate``, as
    /// `AVPlayer.rateDidChangeNotification`; `userInfo[rateDidChangeReasonKey]` says why
    /// (a ``RateDidChangeReason``).
    public static let rateDidChangeNotification = Notification.Name("QueuePlayerRateDidChange")
    /// The `userInfo` key of a ``RateDidChangeReason`` in ``rateDidChangeNotification``.
    public static let rateDidChangeReasonKey = "QueuePlayerRateDidChangeReason"

    /// Why the rate changed (`AVPlayer.RateDidChangeReason`'s first case, and the pause at
    /// an item's end that AVPlayer makes under `actionAtItemEnd = .pause`).
    public enum RateDidChangeReason: Sendable, Hashable {
        /// ``rate``, ``play()`` or ``pause()`` was called.
        case setRateCalled
        /// The item played to its end under ``ActionAtItemEnd/pause``.
        case playedToEnd
    }
    /// Playing, paused, or waiting (see ``reasonForWaitingToPlay``). Observable.
    public var timeControlStatus: TimeControlStatus { published.withLock { $0.timeControlStatus } }
    /// Why the player waits, when ``timeControlStatus`` is `.waitingToPlayAtSpecifiedRate`. Observable.
    public var reasonForWaitingToPlay: WaitingReason? { published.withLock { $0.reasonForWaitingToPlay } }
    /// The audio's volume, 0 (silent) to 1 (as decoded), applied in the render path by a
    /// software mixer (``SoftwareVolume``): at 1 the output is bit-exact. A change is heard
    /// once the audio already in the device has played (up to its buffer).
    public var volume: Float {
        get { Float(renderer.gain.load(ordering: .relaxed)) / Float(SoftwareVolume.unity) }
        set { renderer.gain.store(SoftwareVolume.gain(linear: newValue), ordering: .relaxed) }
    }
    /// How each item's own gain is chosen (ReplayGain, a loudness target; ``GainPolicy``): the
    /// default leaves every item at 0 dB, out of the render path. A change applies to the
    /// items queued at once (heard within the output's buffer) and to each item opened later.
    public var gainPolicy: GainPolicy {
        get { gain.withLock { $0.policy } }
        set {
            gain.withLock { $0.policy = newValue }
            updateGains()
        }
    }
    /// The loudness measured of a file (``LoudnessMeasurement``), asked when an item is opened
    /// or ``updateGains()`` runs, off the render thread; nil: none known.
    public var loudnessLookup: (@Sendable (URL) -> LoudnessMeasurement?)? {
        get { gain.withLock { $0.lookup } }
        set {
            gain.withLock { $0.lookup = newValue }
            updateGains()
        }
    }
    private struct GainSettings {
        var policy = GainPolicy()
        var lookup: (@Sendable (URL) -> LoudnessMeasurement?)?
    }
    private let gain = Mutex(GainSettings())

    /// Chooses the gain of every queued item again (after a measurement arrived, say), on the
    /// control queue, where items are opened: the last gain chosen is the latest policy's.
    public func updateGains() {
        onControlQueue {
            for item in items() where item.status == .readyToPlay { applyGain(to: item) }
        }
    }

    /// Sets `item`'s gain from the policy, its tags and its measurement (on the control queue).
    private func applyGain(to item: PlayerItem) {
        let (policy, lookup) = gain.withLock { ($0.policy, $0.lookup) }
        let measurement = item.isStream ? nil : lookup?(item.url)
        let scale = policy.scale(tags: item.replayGain, measurement: measurement)
        item.gainFactor.store(GainPolicy.fixedPoint(scale), ordering: .relaxed)
    }

    /// A fade's factor, 0 (silent) to 1 (none), applied with ``volume`` and multiplied into it
    /// in the render path (a sleep timer's fade-out): ``volume`` keeps the value a client set.
    /// Heard, as a change of ``volume`` is, once the audio already in the device has played.
    public var fadeVolume: Float {
        get { Float(renderer.fade.load(ordering: .relaxed)) / Float(SoftwareVolume.unity) }
        set { renderer.fade.store(SoftwareVolume.gain(linear: newValue), ordering: .relaxed) }
    }
    /// Whether a network item that waits for data (its start, or after a stall) resumes only
    /// once it is likely to keep up (true, the default, as AVPlayer's), or at its first bytes.
    public var automaticallyWaitsToMinimizeStalling: Bool {
        get { renderer.waitsToMinimizeStalls.load(ordering: .relaxed) }
        set { renderer.waitsToMinimizeStalls.store(newValue, ordering: .relaxed) }
    }

    /// What happens at the end of an item.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { published.withLock { $0.actionAtItemEnd } }
        set { onControlQueue { published.withLock { $0.actionAtItemEnd = newValue }; reconcileRenderer() } }
    }

    /// The items still to play, the current one first.
    public func items() -> [PlayerItem] { published.withLock { $0.items } }
    /// The same as ``items()``, as a property that can be observed.
    public var queuedItems: [PlayerItem] { published.withLock { $0.items } }

    // MARK: Engine

    /// The output the player writes to.
    public let sink: any AudioSink
    /// The clock the player and its sink run on (its owner's measures of time: `stats`).
    public let clock: any PlaybackClock
    private let decoderFactory: any DecoderFactory
    /// Opens the item to follow gaplessly off the control queue (``LookAheadOpener``).
    private let lookAhead: LookAheadOpener
    let controlQueue = DispatchQueue(label: "queueplayer.control", qos: .userInteractive)
    private static let controlQueueKey = DispatchSpecificKey<ObjectIdentifier>()
    private let renderer: Renderer
    /// What a tick works from, on the clock thread or here: the observers, the timer, the span
    /// heard (``TickShare``, under its mutex), the stream's position (``DevicePosition``), the
    /// time last reported (``PlayerTick/audibleFloor``).
    private let ticking: PlayerTick
    /// The item playing and where it lies in the stream, as the control queue last left it
    /// (``publishAudibleSpan(rate:item:)``): ``audibleTimeWhilePlaying(of:)`` reads it from any
    /// thread. Set only when it changes, not at each tick.
    private let audibleSpan = Mutex<AudibleSpan?>(nil)
    let events: RenderEventRing
    /// The clock's participant, when the clock moves only when told (a test's).
    private let clockParticipant: (any ClockRegistration)?
    private let isClosed = Atomic<Bool>(false)
    /// ``close()`` was called: nothing more is handed to the render thread.
    private var isClosedForGood: Bool { isClosed.load(ordering: .acquiring) }

    /// What the control queue owns, in one place: touched only there (``control`` checks it).
    private struct ControlState {
        /// What was handed to the render thread and what of it is audible (`Timeline/Timeline.swift`).
        var timeline = Timeline()
        /// The head of the queue as ``makeHeadCurrent()`` opened it, until a load takes its decoder.
        var openedHead: (item: PlayerItem, decoder: any Decoder)?
        /// The render thread reported the output unusable and retries opening it.
        var outputUnavailable = false
        /// The render thread waits for a network item's data (it reported so, in this generation).
        var waitingForData: WaitingReason?
        /// The span last published in ``QueuePlayer/audibleSpan`` (compared whenever the control
        /// queue schedules a wake-up, so that the lock is taken only when it changes).
        var publishedSpan: AudibleSpan?
    }

    /// Holds ``ControlState`` by reference, so the player's methods change it in place; reached
    /// only through ``QueuePlayer/control``. Owner: the player's control queue (checked there).
    private final class ControlStateBox: @unchecked Sendable {
        var state = ControlState()
    }

    private let controlBox = ControlStateBox()

    /// The control queue's state; in debug builds, every access checks it is made there.
    private var control: ControlStateBox {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(controlQueue))
        #endif
        return controlBox
    }

    /// ``TickShare/timer``, which `init` has made. Not while `tick` is held.
    private var wakeUp: any ReusableTimer {
        guard let timer = ticking.share.withLock({ $0.timer }) else { preconditionFailure("the player's wake-up timer is made at the end of its init") }
        return timer
    }

    /// The current load's generation (the render thread's events and measurements carry it). Control queue.
    var generation: UInt64 { control.state.timeline.generation }

    /// Creates a player for `items`, writing to `sink` and opening items with `decoderFactory`.
    public init(items: [PlayerItem] = [], sink: any AudioSink = NullAudioSink(),
                decoderFactory: any DecoderFactory = MPG123DecoderFactory()) {
        self.sink = sink
        let clock = sink.clock
        self.clock = clock
        self.decoderFactory = decoderFactory
        let lookAhead = LookAheadOpener(factory: decoderFactory, controlQueue: controlQueue)
        self.lookAhead = lookAhead
        let events = RenderEventRing(queue: controlQueue)
        self.events = events
        let renderer = Renderer(sink: sink, events: events)
        self.renderer = renderer
        let ticking = PlayerTick(devicePosition: DevicePosition(position: renderer.position, sink: sink), events: events, clock: clock)
        self.ticking = ticking
        clockParticipant = clock.addParticipant(
            settle: { [controlQueue] in
                lookAhead.settle()
                controlQueue.sync {}
            },
            isQuiescent: {
                lookAhead.isIdle && events.isEmpty && renderer.isQuiescent { sink.isWaitingForTime }
            })
        controlQueue.setSpecific(key: Self.controlQueueKey, value: ObjectIdentifier(self))
        events.start { [weak self] in self?.handleRenderEvents() }
        renderer.start()
        let wakeUp = clock.makeTimer(on: controlQueue, direct: { [ticking] isCurrent in
            ticking.alone(isCurrent)
        }) { [weak self] in self?.wakeUpFired() }
        ticking.share.withLock { $0.timer = wakeUp }
        onControlQueue {
            for item in items { insertOnQueue(item, after: nil) }
        }
    }

    deinit {
        // The last reference is gone: nothing runs on the control queue for the player now
        // (a block there holds a reference while it runs), so its state is reached directly,
        // on whichever thread this is.
        ticking.retireTimer()
        if clockParticipant != nil {
            clockParticipant?.remove()
            // A sink on a clock that moves only when told would wait for time forever.
            sink.stopWaitingForTime()
        }
        renderer.stop()
    }

    /// Stops the player for good: the audio already written plays out (unless
    /// paused), then the output is closed. A daemon calls this before it exits,
    /// so an output that buffers loses nothing; the player does nothing afterwards.
    public func close() {
        guard isClosed.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        onControlQueue {
            cancelWakeUp()
        }
        renderer.stop()
    }

    // MARK: - Transport

    /// Starts or resumes playback of the current item, at ``defaultRate``.
    ///
    /// With an empty queue the player waits (`.waitingToPlayAtSpecifiedRate`,
    /// reason `.noItemToPlay`) and starts as soon as an item is inserted. On an
    /// item that has played to its end under `.pause`, play moves on to the next item.
    public func play() {
        onControlQueue {
            if rate == 0 {
                startPlaying(at: defaultRate)
            } else {
                moveOnFromAnItemHeldAtItsEnd()
            }
        }
    }

    /// Control queue: an item that played to its end under `.pause` is left for the next one.
    private func moveOnFromAnItemHeldAtItsEnd() {
        if control.state.timeline.isHeldAtEnd, published.withLock({ $0.actionAtItemEnd }) == .pause, let item = currentItem {
            removeFromQueue(item)
        }
    }

    /// Control queue, while paused: plays at `newRate` (``play()``, or a rate set while paused).
    private func startPlaying(at newRate: Float) {
        moveOnFromAnItemHeldAtItsEnd()
        changeRate(to: newRate, reason: .setRateCalled)
        renderer.mailbox.post(.play)
        reconcileRenderer()
        updateTimeControlStatus()
        deliverToAllPeriodicObservers()
        scheduleWakeUp()
    }

    /// Pauses playback where it is (rate 0).
    public func pause() {
        onControlQueue {
            guard rate != 0 else { return }
            let position = audiblePosition()
            changeRate(to: 0, reason: .setRateCalled)
            renderer.mailbox.post(.pause)
            updateTimeControlStatus()
            if let position { deliverToAllPeriodicObservers(at: position) }
            scheduleWakeUp()
        }
    }

    /// ``rate``'s setter: 0 pauses; another rate plays at it (clamped to ``supportedRates``).
    private func setRate(_ newValue: Float) {
        guard let wanted = Self.supportedRate(newValue) else { return }
        if wanted == 0 { return pause() }
        onControlQueue {
            guard rate != 0 else { return startPlaying(at: wanted) }
            // Playing on at another pace: the render thread's next chunk takes it (a `paced`
            // event places it in the timeline, and the wake-up is worked out again then).
            changeRate(to: wanted, reason: .setRateCalled)
        }
    }

    /// `rate` within ``supportedRates`` (0 stays 0); nil for a negative or non-finite one.
    static func supportedRate(_ rate: Float) -> Float? {
        guard rate.isFinite, rate >= 0 else { return nil }
        return rate == 0 ? 0 : min(max(rate, supportedRates.lowerBound), supportedRates.upperBound)
    }

    /// Control queue: the published rate becomes `newRate`, announced to its observers and
    /// posted; a rate other than 0 is the render thread's pace from its next chunk.
    private func changeRate(to newRate: Float, reason: RateDidChangeReason) {
        guard newRate != rate else { return }
        if newRate != 0 {
            renderer.pace.store(newRate.bitPattern, ordering: .relaxed)
            // The stretcher is made off the render path, before the chunk that needs it.
            if newRate != 1 { renderer.mailbox.post(.preparePace) }
        }
        setPublished(\.rate, newRate, \Published.rate)
        NotificationCenter.default.post(name: Self.rateDidChangeNotification, object: self,
                                        userInfo: [Self.rateDidChangeReasonKey: reason])
    }

    /// Closes the audio device while playback is paused, so other programs can
    /// use it; the next ``play()`` reopens it and continues where playback paused.
    /// Does nothing while playing. A suspended daemon calls this.
    public func releaseOutput() {
        onControlQueue {
            guard rate == 0 else { return }
            renderer.mailbox.post(.releaseOutput)
        }
    }

    /// The audible position in the current item.
    public func currentTime() -> MediaTime {
        onControlQueue {
            updateTimeline()
            guard let position = audiblePosition() else { return .zero }
            return MediaTime(seconds: position)
        }
    }

    /// Where playback of the current item stops if it is interrupted now (a removal, a
    /// replacement): the audible time for an output whose flush takes back what it holds (a
    /// device's buffer), the end of what was written for one whose reader already has it (a
    /// FIFO's, ``AudioSink/flushTakesBackWrittenAudio``), so that playing on from there later
    /// gives its listener nothing twice. Zero without a current item.
    public func interruptionTime() -> MediaTime {
        onControlQueue {
            updateTimeline()
            var reading = readPosition()
            if !sink.flushTakesBackWrittenAudio, reading.position.generation == control.state.timeline.generation {
                // Everything written counts as heard: no delay, nothing to bring forward.
                reading.position.delay = 0
                reading.position.played = nil
                reading.position.isRunning = false
                reading.position.measuredAt = reading.now
            }
            guard let position = audiblePosition(reading) else { return .zero }
            return MediaTime(seconds: position)
        }
    }

    /// The audible position in `item` while it plays, read on the calling thread without a
    /// trip to the player's queue: from where the player last saw the item in the stream and
    /// the render thread's latest measurement, brought forward by the device's last answer
    /// (the device is not asked here). Nil when the player's queue must be asked
    /// (``currentTime()``): `item` is not the item heard, playback is paused or waiting, the
    /// item has just ended or the stream was restarted. For a server's `status`, which clients
    /// poll: the player's queue may be busy with a tick or a load, and a hop there costs two
    /// thread wake-ups.
    public func audibleTimeWhilePlaying(of item: PlayerItem) -> MediaTime? {
        let published = audibleSpan.withLock { span in span.map { ($0, Double(bitPattern: ticking.audibleFloor.load(ordering: .relaxed))) } }
        guard let (span, floor) = published, span.item === item else { return nil }
        let (snapshot, now) = ticking.devicePosition.read(asking: .never, clock: clock)
        return span.seconds(in: snapshot, at: now, floor: floor).map { MediaTime(seconds: $0) }
    }

    /// Moves playback of the current item to `time` (clamped to the item).
    /// The completion handler receives false if there is no item to seek in.
    public func seek(to time: MediaTime, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        let finished: Bool = onControlQueue {
            guard let item = currentItem else { return false }
            // A live stream has nothing to seek in (its decoder's length is not known).
            if item.isLive { return false }
            guard let decoder = openDecoder(for: item) else { return false }
            let length = decoder.knownFrameCount ?? (decoder.isStreaming ? Int64.max : decoder.frameCount)
            // A stream's new decoder learns its rate from its first frame: the item knows it already.
            let rate = (decoder.isStreaming ? item.format ?? decoder.format : decoder.format).sampleRate
            let frame = min(max(0, Int64((time.seconds * Double(rate)).rounded())), length)
            control.state.timeline.releaseFromEnd()
            load(item, decoder: decoder, at: frame)
            deliverToAllPeriodicObservers()
            scheduleWakeUp()
            return true
        }
        completionHandler?(finished)
    }

    // MARK: - Queue

    /// Ends the current item and moves on to the next.
    public func advanceToNextItem() {
        onControlQueue {
            guard let item = currentItem else { return }
            removeFromQueue(item)
            reconcileRenderer()
            updateTimeControlStatus()
            scheduleWakeUp()
        }
    }

    /// Inserts `item` after `afterItem`, or at the end when `afterItem` is nil.
    public func insert(_ item: PlayerItem, after afterItem: PlayerItem?) {
        onControlQueue {
            insertOnQueue(item, after: afterItem)
            reconcileRenderer()
            updateTimeControlStatus()
            scheduleWakeUp()
        }
    }

    /// Removes `item` from the queue; removing the current item moves on to the next.
    public func remove(_ item: PlayerItem) {
        onControlQueue {
            removeFromQueue(item)
            reconcileRenderer()
            updateTimeControlStatus()
            scheduleWakeUp()
        }
    }

    /// Empties the queue and stops output.
    public func removeAllItems() {
        onControlQueue {
            setPublished(\.queuedItems, [], \Published.items)
            control.state.timeline.releaseFromEnd()
            setCurrentItem(nil)
            reconcileRenderer()
            updateTimeControlStatus()
            scheduleWakeUp()
        }
    }

    // MARK: - Helpers

    /// Runs `body` on the control queue (inline when already there).
    @discardableResult
    func onControlQueue<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.controlQueueKey) == ObjectIdentifier(self) {
            // A call from within the control queue's own work (an observation handler's): what
            // it published for ticks alone is taken back when it returns, since the work around
            // it goes on (and publishes again when it schedules its own wake-up).
            defer { takeTickBack() }
            return body()
        }
        return controlQueue.sync {
            takeTickBack()
            return body()
        }
    }

    /// ``rate`` and ``currentItem`` in one trip to the `published` mutex (a tick needs both).
    private func playingState() -> (rate: Float, item: PlayerItem?) {
        published.withLock { ($0.rate, $0.currentItem) }
    }

    /// Changes published state, announcing it to observers of `keyPath`.
    private func setPublished<Value: Equatable & Sendable>(_ keyPath: KeyPath<QueuePlayer, Value>, _ value: Value,
                                                    _ storage: WritableKeyPath<Published, Value> & Sendable) {
        if self[keyPath: keyPath] == value { return }
        observationRegistry.change(keyPath) { published.withLock { $0[keyPath: storage] = value } }
    }

    private func setCurrentItem(_ item: PlayerItem?) {
        if item != currentItem {
            takeTickBack()
            control.state.timeline.restartAudibleTime()
            ticking.share.withLock { $0.timeObservers.restartTicks() }
        }
        setPublished(\.currentItem, item, \Published.currentItem)
    }

    private func updateTimeControlStatus() {
        let (status, reason): (TimeControlStatus, WaitingReason?) =
            rate == 0 ? (.paused, nil)
            : currentItem == nil ? (.waitingToPlayAtSpecifiedRate, .noItemToPlay)
            : control.state.outputUnavailable ? (.waitingToPlayAtSpecifiedRate, .outputUnavailable)
            : control.state.waitingForData.map { (.waitingToPlayAtSpecifiedRate, $0) } ?? (.playing, nil)
        // Both change in one step, each announced to its own observers: a reader on another
        // thread never sees the new reason beside the old status (waiting for a device that
        // is not there, yet "playing"), nor the reverse.
        let (statusChanges, reasonChanges) = published.withLock { ($0.timeControlStatus != status, $0.reasonForWaitingToPlay != reason) }
        func change() { published.withLock { $0.reasonForWaitingToPlay = reason; $0.timeControlStatus = status } }
        switch (statusChanges, reasonChanges) {
        case (true, true):
            observationRegistry.change(\QueuePlayer.reasonForWaitingToPlay) { observationRegistry.change(\QueuePlayer.timeControlStatus, change) }
        case (true, false): observationRegistry.change(\QueuePlayer.timeControlStatus, change)
        case (false, true): observationRegistry.change(\QueuePlayer.reasonForWaitingToPlay, change)
        case (false, false): break
        }
    }

    private func insertOnQueue(_ item: PlayerItem, after afterItem: PlayerItem?) {
        var queued = items()
        guard !queued.contains(item) else { return }
        if let afterItem, let index = queued.firstIndex(of: afterItem) {
            queued.insert(item, at: index + 1)
        } else {
            queued.append(item)
        }
        setPublished(\.queuedItems, queued, \Published.items)
        if currentItem == nil { makeHeadCurrent() }
    }

    /// Takes `item` out of the queue. If it was the current item, it is no longer held at its
    /// end, and the head of the queue becomes the current item (opened first), unless
    /// `headIsOnItsWay`: the render thread already plays the next item gaplessly, and the
    /// timeline makes it current when it is heard.
    private func removeFromQueue(_ item: PlayerItem, headIsOnItsWay: Bool = false) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let wasCurrent = item == currentItem
        var queued = items()
        queued.removeAll { $0 == item }
        if control.state.openedHead?.item == item { control.state.openedHead = nil }
        setPublished(\.queuedItems, queued, \Published.items)
        guard wasCurrent else { return }
        control.state.timeline.releaseFromEnd()
        if !headIsOnItsWay { makeHeadCurrent() }
    }
}

// MARK: - The timeline

/// The player's side of the timeline, on its control queue: opening items and handing them to
/// the render thread (``load(_:decoder:at:)``, ``reconcileRenderer()``), taking in its events,
/// and acting on what ``Timeline`` says is heard (the current item, an item's end).
extension QueuePlayer {
    // MARK: - Loading items into the render thread

    /// Opens `item` for decoding; a failure fails the item and takes it out of the queue.
    /// Here, on the control queue (it may scan the file), unless it was opened ahead.
    private func openDecoder(for item: PlayerItem) -> (any Decoder)? {
        if let opened = control.state.openedHead, opened.item == item {
            control.state.openedHead = nil
            return opened.decoder
        }
        let result = lookAhead.take(item)
            ?? Result { () throws(DecoderError) -> any Decoder in try item.openDecoder(with: decoderFactory) }
        return accept(result, for: item)
    }

    /// The decoder `result` gives `item`, marked on it; nil if it failed (the item fails and
    /// leaves the queue).
    private func accept(_ result: Result<any Decoder, DecoderError>, for item: PlayerItem) -> (any Decoder)? {
        switch result {
        case .success(let decoder):
            if let source = decoder.streamSource {
                // Ready once its first frames are decoded (``RenderEvent/Kind/bufferingEnded``).
                source.buffer.setConsumerWakeUp { [mailbox = renderer.mailbox] in mailbox.wakeForData() }
                item.attach(source)
            } else {
                item.markReady(decoder)
                applyGain(to: item)
            }
            return decoder
        case .failure(let error):
            failBeforePlaying(item, error)
            return nil
        }
    }

    /// What opening `item`, to follow the render thread's latest item gaplessly, gave off the
    /// control queue (``LookAheadOpener``): a tick never waits for that file's scan. Nil while
    /// it is being opened: ``reconcileRenderer()`` runs again when it is.
    private func openedAhead(_ item: PlayerItem) -> Result<any Decoder, DecoderError>? {
        lookAhead.result(for: item) { [weak self] in
            guard let self, !self.isClosedForGood else { return }
            self.takeTickBack()
            self.reconcileRenderer()
        }
    }

    /// Makes the head of the queue the current item, opened first: an item that cannot be
    /// opened fails and leaves the queue without ever having been the current item (an
    /// observer of `currentItem` never announces what will not play).
    private func makeHeadCurrent() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while let head = items().first {
            if head == currentItem { return }
            if let decoder = openDecoder(for: head) {
                // Kept for the load that follows, so the file is not opened twice.
                control.state.openedHead = (head, decoder)
                setCurrentItem(head)
                return
            }
        }
        setCurrentItem(nil)
    }

    private func failBeforePlaying(_ item: PlayerItem, _ error: DecoderError) {
        item.markFailed(error)
        postFailure(of: item, error)
        removeFromQueue(item)
    }

    private func postFailure(of item: PlayerItem, _ error: DecoderError) {
        NotificationCenter.default.post(name: PlayerItem.failedToPlayToEndTimeNotification, object: item,
                                        userInfo: [PlayerItem.failedToPlayToEndTimeErrorKey: error])
    }

    /// Starts a new generation: the render thread drops what it has and plays `item` from `frame`.
    private func load(_ item: PlayerItem?, decoder: (any Decoder)?, at frame: Int64) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        takeTickBack()
        // At the pace the render thread will play it at (it reports another, should the rate change first).
        let pace = Double(Float(bitPattern: renderer.pace.load(ordering: .relaxed)))
        let renderItem = control.state.timeline.startGeneration(with: item, decoder: decoder, at: frame, rate: pace)
        // A network item waits for its first audio until the render thread says it plays.
        control.state.waitingForData = decoder?.isStreaming == true ? .evaluatingBufferingRate : nil
        ticking.share.withLock { $0.timeObservers.forgetBoundaryProgress() }
        let next = renderItem.flatMap { preparedItem(after: $0.item) }
        control.state.timeline.requestNext(next)
        control.state.timeline.setRendererIdle(renderItem == nil)
        renderer.mailbox.post(.load(generation: control.state.timeline.generation, item: renderItem, next: next, playing: rate != 0))
    }

    /// The item to follow `item` gaplessly, opened; nil if there is none (or the action at end
    /// is not `.advance`), or while it is being opened (``reconcileRenderer()`` hands it over then).
    private func preparedItem(after item: PlayerItem) -> RenderItem? {
        guard actionAtItemEnd == .advance else { return nil }
        while true {
            let queued = items()
            guard let index = queued.firstIndex(of: item), index + 1 < queued.count else { return nil }
            let candidate = queued[index + 1]
            guard let result = openedAhead(candidate) else { return nil }
            if let decoder = accept(result, for: candidate) {
                return control.state.timeline.handOver(candidate, decoder: decoder, startFrame: 0)
            }
        }
    }

    /// Brings the render thread in line with the queue after any change.
    private func reconcileRenderer() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while true {
            let queued = items()
            guard let head = queued.first else {
                if !control.state.timeline.rendererIdle || !control.state.timeline.isEmpty { load(nil, decoder: nil, at: 0) }
                return
            }
            if control.state.timeline.isHeldAtEnd { return }
            // The items not yet finished audibly must be the head of the queue, in order.
            let pending = control.state.timeline.pendingItems
            let consistent = !pending.isEmpty && pending.count <= queued.count && zip(pending, queued).allSatisfy { $0 == $1 }
            guard consistent, !control.state.timeline.rendererIdle else {
                let frame = head == control.state.timeline.audibleItem ? currentFrame() ?? 0 : 0
                guard let decoder = openDecoder(for: head) else { continue }
                load(head, decoder: decoder, at: frame)
                return
            }
            // The render thread's latest item is in the queue: make sure the right one follows it.
            let desired = actionAtItemEnd == .advance && pending.count < queued.count ? queued[pending.count] : nil
            if control.state.timeline.latestIsDecoded && desired == nil { return }
            if desired == control.state.timeline.requestedNextItem { return }
            // What follows: `desired` once it is open; meanwhile nothing (not an item the queue
            // no longer has next).
            var follower: RenderItem?
            if let desired, let result = openedAhead(desired) {
                guard let decoder = accept(result, for: desired) else { continue }
                follower = control.state.timeline.handOver(desired, decoder: decoder, startFrame: 0)
            }
            if follower == nil && control.state.timeline.requestedNextItem == nil { return }
            control.state.timeline.requestNext(follower)
            renderer.mailbox.post(.setNext(follower))
            return
        }
    }

    // MARK: - Render events

    private func handleRenderEvents() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        takeTickBack()
        while let event = events.pop() {
            // The output's state is the device's, not a generation's: a load posted a moment
            // before must not make the player miss that the output failed or came back.
            switch event.kind {
            case .outputFailed, .outputLost: setOutputUnavailable(true)
            case .outputRestored: setOutputUnavailable(false)
            default: break
            }
            guard event.generation == control.state.timeline.generation else { continue }
            switch event.kind {
            case .started, .finished, .failed, .drained, .paced:
                control.state.timeline.record(event)
            case .droppedOnPause:
                // The device could not pause in place: reload the audible position, paused.
                reloadAtAudiblePosition()
            case .outputFailed, .outputRestored:
                break
            case .outputLost:
                // What the device held is gone: play on from what was audible once it is back.
                reloadAtAudiblePosition()
            case .underrunsRecovered:
                NotificationCenter.default.post(name: Self.outputDidRecoverFromUnderrunsNotification, object: self,
                                                userInfo: [Self.underrunCountKey: sink.underruns])
            case .bufferingStarted, .stalled:
                control.state.waitingForData = event.kind == .stalled ? .toMinimizeStalls : .evaluatingBufferingRate
                if let item = control.state.timeline.renderItem(event.renderID)?.item {
                    item.announceBufferFlags()
                    if event.kind == .stalled {
                        NotificationCenter.default.post(name: PlayerItem.playbackStalledNotification, object: item)
                    }
                }
            case .bufferingEnded:
                control.state.waitingForData = nil
                if let renderItem = control.state.timeline.renderItem(event.renderID) {
                    control.state.timeline.learnSampleRate(of: event.renderID, renderItem.decoder.format.sampleRate)
                    renderItem.item.markReady(renderItem.decoder)
                    applyGain(to: renderItem.item)
                    renderItem.item.announceBufferFlags()
                }
            }
        }
        updateTimeline()
        reconcileRenderer()
        updateTimeControlStatus()
        scheduleWakeUp()
    }

    /// The render thread dropped what it had written past the audible position and waits:
    /// hand it the current item again from there.
    private func reloadAtAudiblePosition() {
        updateTimeline()
        if let item = currentItem, !control.state.timeline.isHeldAtEnd, let frame = currentFrame(), let decoder = openDecoder(for: item) {
            load(item, decoder: decoder, at: frame)
        } else {
            // The render thread waits for a load (it plays nothing until one comes).
            control.state.timeline.setRendererIdle(true)
        }
    }

    /// Records whether the output can be used; a new outage is announced once.
    private func setOutputUnavailable(_ unavailable: Bool) {
        guard unavailable != control.state.outputUnavailable else { return }
        control.state.outputUnavailable = unavailable
        NotificationCenter.default.post(name: unavailable ? Self.outputDidFailNotification : Self.outputDidRecoverNotification,
                                        object: self)
    }

    // MARK: - The audible timeline

    /// The stream's position as the player looks at it: the render thread's latest measurement
    /// brought up to date with the device, asked when nothing measured it for half a device
    /// period, or a period (``DevicePosition``), and the clock's time just after. A wake-up reads
    /// it once and uses it throughout (again only if an item entered or ended meanwhile).
    private struct PositionReading {
        var position: StreamPosition.Snapshot
        var now: UInt64
    }

    private func readPosition() -> PositionReading {
        let asking = ticking.share.withLock { share in
            absorbTicksAlone(&share)
            return share.timeObservers.deviceAsking
        }
        let (position, now) = ticking.devicePosition.read(asking: asking, clock: clock)
        return PositionReading(position: position, now: now)
    }

    /// Advances `currentItem` and posts end-of-item notifications for everything audible at
    /// `reading` (read now if nil). Returns true if anything was heard to change (an item
    /// entered or ended): what that ran (notifications, observation handlers) may have
    /// changed the queue, so a reading taken before is stale.
    @discardableResult
    private func updateTimeline(_ reading: PositionReading? = nil) -> Bool {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let reading = reading ?? readPosition()
        guard let audible = control.state.timeline.audibleFrame(in: reading.position, at: reading.now) else { return false }
        var changed = false
        while let step = control.state.timeline.advance(toAudibleFrame: audible) {
            changed = true
            switch step {
            case .entered(let item):
                if item != currentItem {
                    setCurrentItem(item)
                    deliverToAllPeriodicObservers()
                }
            case .ended(let item, let failure, let nextStarts):
                itemDidEnd(item, failure: failure, nextStarts: nextStarts)
            }
        }
        control.state.timeline.forgetHeard()
        if changed {
            let (rate, item) = playingState()
            publishAudibleSpan(rate: rate, item: item)
        }
        return changed
    }

    /// Publishes where the current item (`item`, at `rate`: the published ones) lies in the
    /// stream while it plays, for ``audibleTimeWhilePlaying(of:)``; nil when paused, waiting or
    /// held at its end. After every change of the timeline or of the rate
    /// (``scheduleWakeUp(_:playing:)`` follows each), and at each tick: a tick that leaves the
    /// span as it was (nearly all) stores only the time it reported, without a lock.
    private func publishAudibleSpan(rate: Float, item: PlayerItem?) {
        let state = control
        // Not while a network item waits for data: its time stands still, which the partition's `status` says.
        let span = rate != 0 && !state.state.outputUnavailable && state.state.waitingForData == nil
            ? state.state.timeline.audibleSpan(of: item) : nil
        let floor = span.map { state.state.timeline.lastReportedSeconds(of: $0.item) } ?? 0
        // Compared by hand: `!=` on two optionals went through their generic metadata at each tick.
        let unchanged: Bool
        if let span, let published = state.state.publishedSpan { unchanged = span == published } else {
            unchanged = span == nil && state.state.publishedSpan == nil
        }
        guard !unchanged else {
            if span != nil { ticking.audibleFloor.store(floor.bitPattern, ordering: .relaxed) }
            return
        }
        state.state.publishedSpan = span
        audibleSpan.withLock { published in
            published = span
            ticking.audibleFloor.store(floor.bitPattern, ordering: .relaxed)
        }
    }

    private func itemDidEnd(_ item: PlayerItem, failure: DecoderError?, nextStarts: Bool) {
        if let failure {
            item.markFailed(failure)
            postFailure(of: item, failure)
        } else {
            NotificationCenter.default.post(name: PlayerItem.didPlayToEndTimeNotification, object: item)
        }
        let action = actionAtItemEnd
        if failure != nil || action == .advance {
            removeFromQueue(item, headIsOnItsWay: nextStarts)
            return
        }
        control.state.timeline.holdAtEnd()
        if action == .pause {
            changeRate(to: 0, reason: .playedToEnd)
            renderer.mailbox.post(.pause)
        }
        deliverToAllPeriodicObservers()
    }

    /// The audible frame of the current item, if it is being heard.
    private func currentFrame() -> Int64? {
        let reading = readPosition()
        return control.state.timeline.audibleItemFrame(in: reading.position, at: reading.now)
    }

    /// The audible position in the current item at `reading` (read now if nil), in seconds;
    /// never runs backwards within an item.
    private func audiblePosition(_ reading: PositionReading? = nil) -> Double? {
        let reading = reading ?? readPosition()
        // Read before the timeline is borrowed: evaluated inside the call, it made a copy of the timeline.
        let item = currentItem
        return control.state.timeline.audibleSeconds(of: item, in: reading.position, at: reading.now)
    }
}

// MARK: - Time observers

extension QueuePlayer {
    /// Calls `block` with the audible time of the current item every `interval`
    /// while playing, on `queue` (the main queue when nil; it should be serial).
    ///
    /// Besides the ticks at each multiple of `interval`, the block is called
    /// when playback starts or stops and when time jumps (a seek, a new current
    /// item). A block that falls behind is not queued up: the late call
    /// carries the latest time instead. With the real-time clock a tick's block
    /// runs on the clock thread while holding `queue` (as `sync` would), so it
    /// should be short: a slow block delays the next ticks of every player.
    public func addPeriodicTimeObserver(forInterval interval: MediaTime, queue: DispatchQueue?,
                                        using block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        precondition(interval.value > 0, "the interval of a periodic time observer must be positive")
        return onControlQueue {
            let delivery = TimeObserverDelivery(queue: queue ?? .main, clock: clock, block: block)
            let id = ticking.share.withLock { $0.timeObservers.addPeriodic(interval: interval, delivery: delivery) }
            scheduleWakeUp()
            return TimeObserverToken(id: id, player: self)
        }
    }

    /// Calls `block` on `queue` each time normal playback crosses one of `times`
    /// in the current item (not when a seek jumps over it).
    public func addBoundaryTimeObserver(forTimes times: [MediaTime], queue: DispatchQueue?,
                                        using block: @escaping @Sendable () -> Void) -> TimeObserverToken {
        onControlQueue {
            let delivery = TimeObserverDelivery(queue: queue ?? .main, clock: clock) { _ in block() }
            let id = ticking.share.withLock { $0.timeObservers.addBoundary(times: times.map(\.seconds), delivery: delivery) }
            scheduleWakeUp()
            return TimeObserverToken(id: id, player: self)
        }
    }

    /// Removes a time observer. Once this returns no new call of its block
    /// starts (a call already running on another thread is waited for).
    /// Removing twice, or a token of another player, does nothing.
    public func removeTimeObserver(_ token: TimeObserverToken) {
        removeTimeObserver(id: token.id, ifOwnedBy: token)
    }

    func removeTimeObserver(id: UInt64, ifOwnedBy token: TimeObserverToken? = nil) {
        let delivery: TimeObserverDelivery? = onControlQueue {
            if let token, !token.belongs(to: self) { return nil }
            return ticking.share.withLock { $0.timeObservers.remove(id: id) }
        }
        // Outside the control queue: waiting for a running block must not hold up the player.
        delivery?.cancel()
    }

    // MARK: - Delivery

    /// The "extra" call: every periodic observer gets the current time now (playback
    /// started or stopped, or time jumped), unless it already got exactly this time.
    private func deliverToAllPeriodicObservers(at seconds: Double? = nil) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        guard let seconds = seconds ?? audiblePosition() else { return }
        let item = currentItem
        ticking.share.withLock { $0.timeObservers.deliverToAll(at: seconds, in: item) }
    }

    /// Fires what is due and schedules the next wake-up, all from one reading of the position
    /// (a second one if an item entered or ended meanwhile: what that ran may have changed the queue).
    private func wakeUpFired() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        takeTickBack()
        var reading = readPosition()
        if updateTimeline(reading) { reading = readPosition() }
        // Read once: delivering only queues the blocks, so nothing below changes them.
        let playing = playingState()
        if playing.rate != 0, !control.state.timeline.isHeldAtEnd, let item = playing.item,
           let seconds = control.state.timeline.audibleSeconds(of: item, in: reading.position, at: reading.now) {
            ticking.share.withLock { $0.timeObservers.deliverDue(at: seconds, in: item) }
        }
        scheduleWakeUp(reading, playing: playing)
    }

    /// Control queue, at the start of any work there: no tick runs alone until the next
    /// ``scheduleWakeUp(_:playing:)`` publishes a span again, and what ticks alone reported is
    /// taken into the timeline. (Waits for a tick alone under way.)
    private func takeTickBack() {
        ticking.share.withLock { share in
            absorbTicksAlone(&share)
            share.span = nil
        }
    }

    /// Control queue, `tick` held: the time the clock thread reported alone becomes the
    /// timeline's floor for the item, and the measurement it last worked from the timeline's
    /// last (a device that stands still is seen at the next wake-up either works out).
    private func absorbTicksAlone(_ share: inout TickShare) {
        guard share.reportedAlone else { return }
        share.reportedAlone = false
        if let span = share.span {
            let reported = Double(bitPattern: ticking.audibleFloor.load(ordering: .relaxed))
            control.state.timeline.noteReported(reported, of: span.item, generation: span.generation)
        }
        if let last = share.lastMeasurement {
            control.state.timeline.noteMeasured(audible: last.audible, at: last.at, generation: last.generation)
        }
    }

    /// Control queue: no more wake-ups, none alone either (under the mutex, where a tick alone
    /// checks its deadline is still the timer's before it sets the timer again).
    private func cancelWakeUp() {
        ticking.share.withLock { share in
            share.span = nil
            share.timer?.cancel()
        }
    }

    /// Schedules one timer for the earliest of: the next item boundary, the next
    /// periodic tick, the next boundary time (``Timeline/nextWakeUp(of:in:at:nextDue:)``).
    /// While the stream position is not yet known the player polls briefly instead. From
    /// `reading` and `playing` (``playingState()``) if given (read now if nil).
    private func scheduleWakeUp(_ reading: PositionReading? = nil, playing: (rate: Float, item: PlayerItem?)? = nil) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        // A tick alone from an earlier span (this one may be the second of a piece of work) is taken in first.
        takeTickBack()
        let (rate, item) = playing ?? playingState()
        publishAudibleSpan(rate: rate, item: item)
        // While the output is unavailable time stands still: its return (a render event) reschedules.
        guard rate != 0, let item, !control.state.timeline.isHeldAtEnd, !control.state.outputUnavailable,
              control.state.waitingForData == nil else {
            cancelWakeUp()
            return
        }
        let reading = reading ?? readPosition()
        let state = control
        ticking.share.withLock { share in
            let deadline = state.state.timeline.nextWakeUp(of: item, in: reading.position, at: reading.now) {
                share.timeObservers.nextDue(at: $0)
            }
            // Published with the timer, under the same lock: the tick it sets may run alone.
            share.span = state.state.publishedSpan
            share.lastMeasurement = state.state.timeline.lastMeasured.map { (state.state.timeline.generation, $0.audible, $0.at) }
            // In place of the deadline it had: one trip to the clock's list, not a cancel and a setting.
            share.timer?.schedule(at: max(deadline, reading.now))
        }
    }
}

extension TimeObserverToken {
    func belongs(to player: QueuePlayer) -> Bool { owner === player }
}

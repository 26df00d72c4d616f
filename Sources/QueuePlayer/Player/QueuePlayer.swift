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
/// (`queueplayer.control`), which owns the player's state (the timeline, the
/// observers' schedule, the opened head); the published properties are also
/// read from other threads, under the `published` mutex. Observation handlers
/// run on `controlQueue`. The public methods may be called from any thread,
/// including from those handlers.
public final class QueuePlayer: KeyValueObservable, @unchecked Sendable {
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
        var timeControlStatus: TimeControlStatus = .paused
        var reasonForWaitingToPlay: WaitingReason?
        var actionAtItemEnd: ActionAtItemEnd = .advance
    }

    private let published = Mutex(Published())
    public let observationRegistry = ObservationRegistry()

    /// The item being heard (the head of the queue), or nil. Observable.
    public var currentItem: PlayerItem? { published.withLock { $0.currentItem } }
    /// 1 while playback is wanted, 0 when paused. Observable.
    public var rate: Float {
        get { published.withLock { $0.rate } }
        set { if newValue == 0 { pause() } else { play() } }
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
    let clock: any PlaybackClock
    let decoderFactory: any DecoderFactory
    /// Opens the item to follow gaplessly off the control queue (``LookAheadOpener``).
    let lookAhead: LookAheadOpener
    let controlQueue = DispatchQueue(label: "queueplayer.control", qos: .userInteractive)
    private static let controlQueueKey = DispatchSpecificKey<ObjectIdentifier>()
    var renderer: Renderer!
    var events: RenderEventRing!
    /// The clock's participant, when the clock moves only when told (a test's).
    private var clockParticipant: (any ClockRegistration)?
    private let isClosed = Atomic<Bool>(false)
    /// ``close()`` was called: nothing more is handed to the render thread.
    var isClosedForGood: Bool { isClosed.load(ordering: .acquiring) }

    // Control-queue state: touched only on `controlQueue`.
    /// What was handed to the render thread and what of it is audible (`Timeline/Timeline.swift`).
    var timeline = Timeline()
    /// The current load's generation (the render thread's events and measurements carry it).
    var generation: UInt64 { timeline.generation }
    /// The head of the queue as ``makeHeadCurrent()`` opened it, until a load takes its decoder.
    var openedHead: (item: PlayerItem, decoder: any Decoder)?
    /// The render thread reported the output unusable and retries opening it.
    var outputUnavailable = false
    /// The device's latest answer to ``readPosition()`` (``AudioSink/playedFrames()``): used
    /// when it cannot answer at that moment (the render thread is writing to it), as long
    /// as it is fresher than the render thread's measurement.
    var deviceAnswer: PlayedFrames?
    /// The periodic and boundary time observers and what is due.
    var timeObservers = TimeObserverSchedule()
    /// The player's one timer (``wakeUpFired()`` on the control queue), made once and set again
    /// for each wake-up: with ``RealTimeClock`` setting it allocates nothing, so a tick does not.
    var wakeUp: (any ReusableTimer)!

    /// Creates a player for `items`, writing to `sink` and opening items with `decoderFactory`.
    public init(items: [PlayerItem] = [], sink: any AudioSink = NullAudioSink(),
                decoderFactory: any DecoderFactory = MPG123DecoderFactory()) {
        self.sink = sink
        self.clock = sink.clock
        self.decoderFactory = decoderFactory
        lookAhead = LookAheadOpener(factory: decoderFactory, controlQueue: controlQueue)
        controlQueue.setSpecific(key: Self.controlQueueKey, value: ObjectIdentifier(self))
        events = RenderEventRing(queue: controlQueue) { [weak self] in self?.handleRenderEvents() }
        renderer = Renderer(sink: sink, events: events)
        renderer.start()
        wakeUp = clock.makeTimer(on: controlQueue) { [weak self] in self?.wakeUpFired() }
        let nullSink = sink as? NullAudioSink
        clockParticipant = clock.addParticipant(
            settle: { [controlQueue, lookAhead] in
                lookAhead.settle()
                controlQueue.sync {}
            },
            isQuiescent: { [renderer, events, lookAhead] in
                lookAhead.isIdle && events!.isEmpty && renderer!.isQuiescent { nullSink?.isWaitingForTime ?? true }
            })
        onControlQueue {
            for item in items { insertOnQueue(item, after: nil) }
        }
    }

    deinit {
        wakeUp?.cancel()
        if let clockParticipant {
            clockParticipant.remove()
            // A null sink on a clock that moves only when told would wait for time forever:
            // closing it releases the writer.
            (sink as? NullAudioSink)?.close()
        }
        renderer.stop()
    }

    /// Stops the player for good: the audio already written plays out (unless
    /// paused), then the output is closed. A daemon calls this before it exits,
    /// so an output that buffers loses nothing; the player does nothing afterwards.
    public func close() {
        guard isClosed.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        onControlQueue {
            wakeUp.cancel()
        }
        renderer.stop()
    }

    // MARK: - Transport

    /// Starts or resumes playback of the current item (rate 1).
    ///
    /// With an empty queue the player waits (`.waitingToPlayAtSpecifiedRate`,
    /// reason `.noItemToPlay`) and starts as soon as an item is inserted. On an
    /// item that has played to its end under `.pause`, play moves on to the next item.
    public func play() {
        onControlQueue {
            if timeline.isHeldAtEnd, published.withLock({ $0.actionAtItemEnd }) == .pause, let item = currentItem {
                removeFromQueue(item)
            }
            guard rate == 0 else { return }
            setPublished(\.rate, 1, \Published.rate)
            renderer.mailbox.post(.play)
            reconcileRenderer()
            updateTimeControlStatus()
            deliverToAllPeriodicObservers()
            scheduleWakeUp()
        }
    }

    /// Pauses playback where it is (rate 0).
    public func pause() {
        onControlQueue {
            guard rate != 0 else { return }
            let position = audiblePosition()
            setPublished(\.rate, 0, \Published.rate)
            renderer.mailbox.post(.pause)
            updateTimeControlStatus()
            if let position { deliverToAllPeriodicObservers(at: position) }
            scheduleWakeUp()
        }
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

    /// Moves playback of the current item to `time` (clamped to the item).
    /// The completion handler receives false if there is no item to seek in.
    public func seek(to time: MediaTime, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        let finished: Bool = onControlQueue {
            guard let item = currentItem else { return false }
            guard let decoder = openDecoder(for: item) else { return false }
            let frame = min(max(0, Int64((time.seconds * Double(decoder.format.sampleRate)).rounded())), decoder.frameCount)
            timeline.releaseFromEnd()
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
            timeline.releaseFromEnd()
            setCurrentItem(nil)
            reconcileRenderer()
            updateTimeControlStatus()
            scheduleWakeUp()
        }
    }

    // MARK: - Helpers shared by the extensions

    /// Runs `body` on the control queue (inline when already there).
    @discardableResult
    func onControlQueue<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.controlQueueKey) == ObjectIdentifier(self) { return body() }
        return controlQueue.sync(execute: body)
    }

    /// Changes published state, announcing it to observers of `keyPath`.
    func setPublished<Value: Equatable & Sendable>(_ keyPath: KeyPath<QueuePlayer, Value>, _ value: Value,
                                                    _ storage: WritableKeyPath<Published, Value> & Sendable) {
        if self[keyPath: keyPath] == value { return }
        observationRegistry.change(keyPath) { published.withLock { $0[keyPath: storage] = value } }
    }

    func setCurrentItem(_ item: PlayerItem?) {
        if item != currentItem {
            timeline.restartAudibleTime()
            timeObservers.restartTicks()
        }
        setPublished(\.currentItem, item, \Published.currentItem)
    }

    func updateTimeControlStatus() {
        let (status, reason): (TimeControlStatus, WaitingReason?) =
            rate == 0 ? (.paused, nil)
            : currentItem == nil ? (.waitingToPlayAtSpecifiedRate, .noItemToPlay)
            : outputUnavailable ? (.waitingToPlayAtSpecifiedRate, .outputUnavailable)
            : (.playing, nil)
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
    func removeFromQueue(_ item: PlayerItem, headIsOnItsWay: Bool = false) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let wasCurrent = item == currentItem
        var queued = items()
        queued.removeAll { $0 == item }
        if openedHead?.item == item { openedHead = nil }
        setPublished(\.queuedItems, queued, \Published.items)
        guard wasCurrent else { return }
        timeline.releaseFromEnd()
        if !headIsOnItsWay { makeHeadCurrent() }
    }
}

import Synchronization

/// What the player has handed to the render thread, and what of it is audible: which item is
/// heard at which frame of the device's stream, and the audible time in that item.
///
/// Each load starts a *generation*: a new stream, counted in frames from 0, that the render
/// thread writes without a gap from one item to the next. Every item handed over (a
/// ``RenderItem``, told apart by its id even when the same ``PlayerItem`` is handed over again)
/// becomes a segment of that stream once the render thread reports where it starts and ends.
/// The device plays the stream late by its delay, so the player must follow what is *heard*,
/// not what is decoded: an item becomes current when its first frame is audible and ends when
/// its last one is. This type keeps those rules in one place.
///
/// A value owned by the player's control queue (``QueuePlayer`` keeps it there and uses it
/// nowhere else; it is not `Sendable`). Its state is private, and it reads no clock and no
/// device: every question about the audible position takes the render thread's latest
/// measurement (``StreamPosition/Snapshot``) and the clock's time, so its rules can be tested
/// on their own. It calls nothing back either: the player walks ``advance(toAudibleFrame:)`` a
/// step at a time and acts on each step (announcing a current item, ending an item) before it
/// asks for the next, so whatever those actions run (observation handlers that change the
/// queue) finds the timeline as it is. The per-tick methods (``audibleFrame(in:at:)``,
/// ``advance(toAudibleFrame:)``, ``audibleSeconds(of:in:at:)``, ``nextWakeUp(of:in:at:nextDue:)``)
/// allocate nothing.
struct Timeline {
    /// One item's stretch of the stream of a generation, or a piece of it played at one rate.
    ///
    /// At a rate other than 1 the stream (the output's frames) and the item (its own frames)
    /// move at different paces: a segment maps `rate` item frames to each stream frame. A
    /// change of rate within an item (``RenderEvent/Kind/paced``) ends the piece it plays in and
    /// starts a continuation, which the item crosses without being entered or ended again.
    private struct Segment {
        let renderID: UInt64
        let item: PlayerItem
        /// The stream frame at which the item's first decoded frame was written (of a
        /// continuation: the frame its rate starts at).
        let start: Int64
        /// The item frame heard at `start` (decoding started there: non-zero after a seek).
        var itemStartFrame: Int64
        var sampleRate: Int
        /// Item frames per stream frame: the playback rate (1, exactly, without a stretcher).
        var rate: Double = 1
        /// A piece of the item after a change of rate: entered with the piece before it.
        var isContinuation = false
        /// The stream frame after the item's last frame, once decoding has ended.
        var end: Int64?
        var failure: DecoderError?
        /// Its first frame has been heard.
        var entered = false
    }

    /// What happened audibly, one step of ``advance(toAudibleFrame:)``.
    enum Step {
        /// The first frame of the item became audible.
        case entered(PlayerItem)
        /// The item's last frame was heard (`failure`: decoding failed there); `nextStarts`:
        /// another item follows it in the stream (the render thread is already playing it).
        case ended(PlayerItem, failure: DecoderError?, nextStarts: Bool)
    }

    /// How soon the position is looked at again while it is not known, or nothing has been
    /// written yet: soon, as the render thread is usually about to publish, but not at once.
    static let positionPollInterval: UInt64 = 2_000_000
    /// How often a starved stream (a write blocked, a device stalled: every frame written has
    /// been heard) is looked at: once a tick. It stays starved for as long as the stall, which
    /// can be seconds, and polled every 2 ms it woke the player 500 times a second for
    /// nothing; the first write after it is still seen within a tick. (A stream with nothing
    /// written yet, just loaded, is looked at every ``positionPollInterval``: its first write
    /// is on its way.)
    static let starvedPollInterval: UInt64 = 10_000_000
    /// The longest the player sleeps while playing, whatever is due.
    static let longestSleep: UInt64 = 250_000_000

    /// The current load: render events and measurements of another generation are stale.
    private(set) var generation: UInt64 = 0
    private var lastRenderID: UInt64 = 0
    /// Items handed to the render thread in this generation, by render id. Kept until heard:
    /// their decoders (open files) are released here, on the control queue.
    private var handoffs: [UInt64: RenderItem] = [:]
    /// The item the render thread was asked to continue with, until it starts.
    private var requestedNextID: UInt64?
    /// The render thread has nothing to play: it drained, or waits for a load.
    private(set) var rendererIdle = true
    /// The segments of this generation not yet heard to their end, in stream order.
    private var segments: [Segment] = []
    /// The segment being heard, or about to be.
    private var audibleIndex = 0
    /// The current item played to its end and stays (`.pause` or `.none`).
    private(set) var isHeldAtEnd = false
    /// The last audible time reported, which the next one never goes below in the same item.
    private var lastReportedTime: (item: PlayerItem, seconds: Double)?
    /// The measurement ``nextWakeUp(of:in:at:nextDue:)`` was last given, in this generation:
    /// the audible frame it measured, and when. A later measurement of the same frame means
    /// the device stands still.
    private var lastMeasurement: (audible: Int64, at: UInt64)?
    /// The measurement the last wake-up was worked out from (``nextWakeUp(of:in:at:nextDue:)``).
    var lastMeasured: (audible: Int64, at: UInt64)? { lastMeasurement }

    // MARK: - Hand-overs

    /// Starts a new generation: forgets every hand-over and segment of the last, and hands over
    /// `item` (when there is one) to play from its `frame`. A load starts at stream frame 0, so
    /// its segment is known before the render thread reports it.
    mutating func startGeneration(with item: PlayerItem?, decoder: (any Decoder)?, at frame: Int64, rate: Double = 1) -> RenderItem? {
        generation += 1
        lastMeasurement = nil
        handoffs.removeAll()
        segments.removeAll()
        audibleIndex = 0
        lastReportedTime = nil
        guard let item, let decoder else { return nil }
        let loaded = handOver(item, decoder: decoder, startFrame: frame)
        segments.append(Segment(renderID: loaded.id, item: item, start: 0, itemStartFrame: frame,
                                sampleRate: decoder.format.sampleRate, rate: rate))
        return loaded
    }

    /// Hands `item` to the render thread, opened, to decode from `startFrame`: it gets a render
    /// id of its own, by which its events are known.
    mutating func handOver(_ item: PlayerItem, decoder: any Decoder, startFrame: Int64) -> RenderItem {
        lastRenderID += 1
        let renderItem = RenderItem(id: lastRenderID, item: item, decoder: decoder, startFrame: startFrame)
        handoffs[renderItem.id] = renderItem
        return renderItem
    }

    /// The render thread was asked to continue with `next` after its latest item (nil: with nothing).
    mutating func requestNext(_ next: RenderItem?) {
        requestedNextID = next?.id
    }

    /// The render thread plays (a load handed it an item) or waits (it was handed none, or it
    /// dropped what it had and waits for a load).
    mutating func setRendererIdle(_ idle: Bool) {
        rendererIdle = idle
    }

    /// Records a render event of this generation (others are stale and ignored): an item's first
    /// or last frame entering the stream, a decoding failure, or the render thread drained.
    mutating func record(_ event: RenderEvent) {
        guard event.generation == generation else { return }
        switch event.kind {
        case .started:
            guard let renderItem = handoffs[event.renderID] else { return }
            rendererIdle = false
            if segments.contains(where: { $0.renderID == event.renderID }) { return }
            segments.append(Segment(renderID: event.renderID, item: renderItem.item, start: event.streamFrame,
                                    itemStartFrame: renderItem.startFrame, sampleRate: renderItem.decoder.format.sampleRate,
                                    rate: event.rate))
            if requestedNextID == event.renderID { requestedNextID = nil }
        case .finished, .failed:
            if let index = segments.lastIndex(where: { $0.renderID == event.renderID }) {
                segments[index].end = event.streamFrame
                if event.kind == .failed {
                    segments[index].failure = handoffs[event.renderID]?.failure.withLock { $0 }
                }
            }
        case .drained:
            rendererIdle = true
        case .paced:
            guard let index = segments.lastIndex(where: { $0.renderID == event.renderID }), segments[index].end == nil else { return }
            if segments[index].start >= event.streamFrame {
                // From the piece's first frame: the piece itself plays at the rate.
                segments[index].rate = event.rate
                segments[index].itemStartFrame = event.itemFrame
                return
            }
            segments[index].end = event.streamFrame
            var piece = Segment(renderID: event.renderID, item: segments[index].item, start: event.streamFrame,
                                itemStartFrame: event.itemFrame, sampleRate: segments[index].sampleRate, rate: event.rate)
            piece.isContinuation = true
            segments.insert(piece, at: index + 1)
        case .droppedOnPause, .outputFailed, .outputLost, .outputRestored, .underrunsRecovered,
             .bufferingStarted, .stalled, .bufferingEnded:
            break
        }
    }

    /// The item handed over with render id `id` in this generation, while kept.
    func renderItem(_ id: UInt64) -> RenderItem? { handoffs[id] }

    /// A stream's decoder learnt its sample rate from its first frame (after it was handed
    /// over, with a guess): its segment's times are in that rate.
    mutating func learnSampleRate(of id: UInt64, _ rate: Int) {
        for index in segments.indices where segments[index].renderID == id { segments[index].sampleRate = rate }
    }

    /// Nothing of this generation is left to hear: no item handed over, or all heard and forgotten.
    var isEmpty: Bool { segments.isEmpty }

    /// The items whose end has not been heard yet, in stream order (the one being heard first).
    var pendingItems: [PlayerItem] {
        let pending = segments[min(audibleIndex, segments.count)...]
        // An item's pieces after a change of pace are still the one item.
        return pending.indices.filter { $0 == pending.startIndex || !segments[$0].isContinuation }.map { segments[$0].item }
    }

    /// The render thread has decoded the latest item it was handed to its end.
    var latestIsDecoded: Bool { segments.last?.end != nil }

    /// The item the render thread was asked to continue with, while it has not started.
    var requestedNextItem: PlayerItem? { requestedNextID.flatMap { handoffs[$0]?.item } }

    // MARK: - What is audible

    /// The item being heard, once its first frame is audible.
    var audibleItem: PlayerItem? { audibleSegment?.item }

    private var audibleSegment: Segment? {
        guard audibleIndex < segments.count, segments[audibleIndex].entered else { return nil }
        return segments[audibleIndex]
    }

    /// The stream frame heard at `now`, or nil if `snapshot` is of another generation.
    func audibleFrame(in snapshot: StreamPosition.Snapshot, at now: UInt64) -> Double? {
        guard snapshot.generation == generation else { return nil }
        return snapshot.audibleFrame(at: now)
    }

    /// What hearing the stream up to `audible` did, one step at a time: the next segment's first
    /// frame heard, or the audible segment's last one; nil once nothing more has happened.
    ///
    /// The render thread reports an item's end and the next item's start one after the other;
    /// while the next item's start is on its way (one was requested and the render thread
    /// plays), the end of the last segment waits for it: taking the next item for missing
    /// would reload it over what is already written.
    mutating func advance(toAudibleFrame audible: Double) -> Step? {
        while audibleIndex < segments.count {
            let segment = segments[audibleIndex]
            if !segment.entered {
                guard audible >= Double(segment.start) else { return nil }
                segments[audibleIndex].entered = true
                if segment.isContinuation { continue }
                return .entered(segment.item)
            }
            guard let end = segment.end, audible >= Double(end) else { return nil }
            // A piece that another piece of the item continues: crossed, not ended.
            if audibleIndex + 1 < segments.count, segments[audibleIndex + 1].isContinuation {
                audibleIndex += 1
                segments[audibleIndex].entered = true
                continue
            }
            if audibleIndex + 1 == segments.count, requestedNextID != nil, !rendererIdle { return nil }
            audibleIndex += 1
            return .ended(segment.item, failure: segment.failure, nextStarts: audibleIndex < segments.count)
        }
        return nil
    }

    /// Forgets the segments heard to their end: the render thread let go of those items when it
    /// decoded past them, so their decoders are released with them (but the one requested next).
    mutating func forgetHeard() {
        guard audibleIndex > 0 && audibleIndex <= segments.count else { return }
        let heard = audibleIndex < segments.count ? segments[audibleIndex].renderID : nil
        for finished in segments[..<audibleIndex] where finished.renderID != requestedNextID && finished.renderID != heard {
            handoffs.removeValue(forKey: finished.renderID)
        }
        segments.removeFirst(audibleIndex)
        audibleIndex = 0
    }

    /// The audible frame of the item being heard, in the item's own frames; nil if none is heard yet.
    func audibleItemFrame(in snapshot: StreamPosition.Snapshot, at now: UInt64) -> Int64? {
        guard let segment = audibleSegment else { return nil }
        guard snapshot.generation == generation else { return segment.itemStartFrame }
        var played = Int64(snapshot.audibleFrame(at: now)) - segment.start
        played = max(0, min(played, (segment.end ?? Int64.max) - segment.start))
        return segment.itemStartFrame + (segment.rate == 1 ? played : Int64((Double(played) * segment.rate).rounded()))
    }

    /// The audible time of `item` (the player's current item) in seconds, or nil without one;
    /// never runs backwards within an item. At its end (held there) it is the item's duration;
    /// handed over but not heard yet, where it will start.
    mutating func audibleSeconds(of item: PlayerItem?, in snapshot: StreamPosition.Snapshot, at now: UInt64) -> Double? {
        guard let item else { return nil }
        var seconds: Double
        if isHeldAtEnd {
            seconds = item.duration?.seconds ?? 0
        } else if let segment = audibleSegment {
            var played = snapshot.generation == generation ? snapshot.audibleFrame(at: now) - Double(segment.start) : 0
            played = max(0, min(played, Double((segment.end ?? Int64.max) - segment.start)))
            seconds = (Double(segment.itemStartFrame) + played * segment.rate) / Double(segment.sampleRate)
        } else if let loaded = segments.first(where: { $0.item == item }) {
            // Handed to the render thread but not yet audible.
            seconds = Double(loaded.itemStartFrame) / Double(loaded.sampleRate)
        } else {
            seconds = 0
        }
        if let last = lastReportedTime, last.item == item, seconds < last.seconds { seconds = last.seconds }
        lastReportedTime = (item, seconds)
        return seconds
    }

    /// The audible segment of `item` as another thread needs it to work out the item's time
    /// (``AudibleSpan``): nil unless `item` is being heard, not held at its end.
    func audibleSpan(of item: PlayerItem?) -> AudibleSpan? {
        guard let item, !isHeldAtEnd, let segment = audibleSegment, segment.item === item else { return nil }
        return AudibleSpan(item: item, generation: generation, start: segment.start, end: segment.end,
                           itemStartFrame: segment.itemStartFrame, sampleRate: segment.sampleRate, rate: segment.rate)
    }

    /// The last audible time reported for `item` (0 if none): the time another thread works
    /// out from its ``AudibleSpan`` never goes below it.
    func lastReportedSeconds(of item: PlayerItem) -> Double {
        lastReportedTime.flatMap { $0.item === item ? $0.seconds : nil } ?? 0
    }

    /// A new current item: its time starts afresh, and may be earlier than the last one reported.
    mutating func restartAudibleTime() {
        lastReportedTime = nil
    }

    /// The current item played to its end and stays there (`.pause`, `.none`).
    mutating func holdAtEnd() {
        isHeldAtEnd = true
        lastReportedTime = nil
    }

    /// The current item is no longer held at its end (it was played again, sought in, removed).
    mutating func releaseFromEnd() {
        isHeldAtEnd = false
    }

    // MARK: - When to look again

    /// The clock's time (nanoseconds) at which the player should look at the timeline again while
    /// `item` plays: the next item boundary heard, or the item time of the earliest observer
    /// call (`nextDue`, given the audible time of `item`), whichever is first, and at the latest
    /// ``longestSleep`` from `now`. While the stream's position is not known (a measurement of
    /// another generation, a stream not running) it is soon: ``positionPollInterval``.
    mutating func nextWakeUp(of item: PlayerItem, in snapshot: StreamPosition.Snapshot, at now: UInt64,
                             nextDue: (Double) -> Double?) -> UInt64 {
        guard snapshot.generation == generation, snapshot.isRunning, snapshot.sampleRate > 0 else {
            return now + Self.positionPollInterval
        }
        let hearing = Hearing(snapshot: snapshot, now: now, last: lastMeasurement)
        lastMeasurement = (hearing.audibleAtMeasurement, snapshot.measuredAt)
        guard audibleIndex < segments.count else { return now + Self.longestSleep }
        let segment = segments[audibleIndex]
        if !segment.entered {
            return min(now + Self.longestSleep, hearing.when(Double(segment.start)))
        }
        return hearing.wakeUp(start: segment.start, end: segment.end, itemStartFrame: segment.itemStartFrame,
                              sampleRate: segment.sampleRate, rate: segment.rate,
                              seconds: audibleSeconds(of: item, in: snapshot, at: now), nextDue: nextDue)
    }

    /// The clock thread reported `seconds` for `item` of `generation` without the control
    /// queue (the player's tick, ``AudibleSpan``): the time reported next for the item never
    /// goes below it. A report of another generation, or from before a new current item, is
    /// ignored.
    mutating func noteReported(_ seconds: Double, of item: PlayerItem, generation: UInt64) {
        guard generation == self.generation, !isHeldAtEnd, audibleSegment?.item === item else { return }
        if let last = lastReportedTime, last.item === item, last.seconds >= seconds { return }
        lastReportedTime = (item, seconds)
    }

    /// The clock thread worked a wake-up out alone from the measurement of `audible` at `at` in
    /// `generation` (``Hearing``): the next wake-up here compares with it.
    mutating func noteMeasured(audible: Int64, at: UInt64, generation: UInt64) {
        guard generation == self.generation else { return }
        if let last = lastMeasurement, last.at >= at { return }
        lastMeasurement = (audible, at)
    }
}

/// The item being heard and where it lies in the stream, as the control queue last saw it:
/// enough for another thread to work out the item's audible time from a measurement of the
/// stream (``StreamPosition/Snapshot``) without a trip to the control queue
/// (``QueuePlayer/audibleTimeWhilePlaying(of:)``, and the clock thread's tick alone: ``TickShare``).
///
/// It changes only when the timeline, the rate or the output's state does (not at each tick):
/// the last time reported for the item, which changes at each tick, travels beside it
/// (``seconds(in:at:floor:)``), so that a tick that leaves the span as it was publishes nothing
/// but that time.
struct AudibleSpan: Sendable, Equatable {
    let item: PlayerItem
    /// The generation the stream frames belong to.
    let generation: UInt64
    /// The stream frames of the item's first frame heard, and of the frame after its last one once decoded.
    let start: Int64
    let end: Int64?
    /// The item's own frame at `start`.
    let itemStartFrame: Int64
    let sampleRate: Int
    /// Item frames per stream frame (``Timeline``'s segments).
    var rate: Double = 1

    static func == (lhs: AudibleSpan, rhs: AudibleSpan) -> Bool {
        lhs.item === rhs.item && lhs.generation == rhs.generation && lhs.start == rhs.start && lhs.end == rhs.end
            && lhs.itemStartFrame == rhs.itemStartFrame && lhs.sampleRate == rhs.sampleRate && lhs.rate == rhs.rate
    }

    /// The item's audible time in seconds at `now`, never below `floor` (the last time
    /// reported for the item: the time never runs backwards); nil when `snapshot`
    /// is of another generation or not running, or the audible frame lies outside the span (the
    /// item has ended, or time moved backwards): the control queue must look.
    func seconds(in snapshot: StreamPosition.Snapshot, at now: UInt64, floor: Double) -> Double? {
        guard snapshot.generation == generation, snapshot.isRunning, sampleRate > 0 else { return nil }
        let audible = snapshot.audibleFrame(at: now)
        guard audible >= Double(start), audible < Double(end ?? .max) else { return nil }
        // In the order the control queue's timeline works it out: a tick alone reports the same bits.
        return max(floor, (Double(itemStartFrame) + (audible - Double(start)) * rate) / Double(sampleRate))
    }
}

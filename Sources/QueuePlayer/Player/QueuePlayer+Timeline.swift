import Foundation

/// One item's stretch of the render stream within a generation.
struct Segment {
    let renderID: UInt64
    let item: PlayerItem
    /// The stream frame at which the item's first decoded frame was written.
    let start: Int64
    /// The item frame decoding started from (non-zero after a seek).
    let itemStartFrame: Int64
    let sampleRate: Int
    /// The stream frame after the item's last frame, once decoding has ended.
    var end: Int64?
    var failure: DecoderError?
    var entered = false
}

extension QueuePlayer {
    // MARK: - Loading items into the render thread

    /// Opens `item` for decoding; a failure fails the item and takes it out of the queue.
    func openDecoder(for item: PlayerItem) -> (any Decoder)? {
        if let opened = openedHead, opened.item == item {
            openedHead = nil
            return opened.decoder
        }
        do {
            let decoder = try decoderFactory.makeDecoder(for: item.url)
            item.markReady(decoder)
            return decoder
        } catch {
            failBeforePlaying(item, error)
            return nil
        }
    }

    /// Makes the head of the queue the current item, opened first: an item that cannot be
    /// opened fails and leaves the queue without ever having been the current item (an
    /// observer of `currentItem` never announces what will not play).
    func makeHeadCurrent() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while let head = items().first {
            if head == currentItem { return }
            if let decoder = openDecoder(for: head) {
                // Kept for the load that follows, so the file is not opened twice.
                openedHead = (head, decoder)
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

    private func makeRenderItem(_ item: PlayerItem, _ decoder: any Decoder, startFrame: Int64) -> RenderItem {
        nextRenderID += 1
        let renderItem = RenderItem(id: nextRenderID, item: item, decoder: decoder, startFrame: startFrame)
        handoffs[renderItem.id] = renderItem
        return renderItem
    }

    /// Starts a new generation: the render thread drops what it has and plays `item` from `frame`.
    func load(_ item: PlayerItem?, decoder: (any Decoder)?, at frame: Int64) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        generation += 1
        handoffs.removeAll()
        segments.removeAll()
        audibleIndex = 0
        lastReportedTime = nil
        timeObservers.forgetBoundaryProgress()
        var renderItem: RenderItem?
        if let item, let decoder {
            let loaded = makeRenderItem(item, decoder, startFrame: frame)
            // A load always starts at stream frame 0, so its segment is known before the render thread reports it.
            segments.append(Segment(renderID: loaded.id, item: item, start: 0, itemStartFrame: frame,
                                    sampleRate: decoder.format.sampleRate))
            renderItem = loaded
        }
        let next = renderItem.flatMap { preparedItem(after: $0.item) }
        requestedNextID = next?.id
        rendererIdle = renderItem == nil
        renderer.mailbox.post(.load(generation: generation, item: renderItem, next: next, playing: rate != 0))
    }

    /// The item to follow `item` gaplessly, opened; nil if there is none (or the action at end is not `.advance`).
    private func preparedItem(after item: PlayerItem) -> RenderItem? {
        guard actionAtItemEnd == .advance else { return nil }
        while true {
            let queued = items()
            guard let index = queued.firstIndex(of: item), index + 1 < queued.count else { return nil }
            let candidate = queued[index + 1]
            if let decoder = openDecoder(for: candidate) {
                return makeRenderItem(candidate, decoder, startFrame: 0)
            }
        }
    }

    /// Brings the render thread in line with the queue after any change.
    func reconcileRenderer() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while true {
            let queued = items()
            guard let head = queued.first else {
                if !rendererIdle || !segments.isEmpty { load(nil, decoder: nil, at: 0) }
                return
            }
            if currentItemAtEnd { return }
            // The segments not yet finished audibly must be the head of the queue, in order.
            let pending = segments[min(audibleIndex, segments.count)...].map(\.item)
            let consistent = !pending.isEmpty && pending.count <= queued.count && zip(pending, queued).allSatisfy { $0 == $1 }
            guard consistent, !rendererIdle else {
                let frame = head == currentAudibleSegment?.item ? currentFrame() ?? 0 : 0
                guard let decoder = openDecoder(for: head) else { continue }
                load(head, decoder: decoder, at: frame)
                return
            }
            // The render thread's latest item is in the queue: make sure the right one follows it.
            let latest = segments[segments.count - 1]
            let desired = actionAtItemEnd == .advance && pending.count < queued.count ? queued[pending.count] : nil
            let requested = requestedNextID.flatMap { handoffs[$0]?.item }
            if latest.end != nil && desired == nil { return }
            if desired == requested { return }
            if let desired {
                guard let decoder = openDecoder(for: desired) else { continue }
                let renderItem = makeRenderItem(desired, decoder, startFrame: 0)
                requestedNextID = renderItem.id
                renderer.mailbox.post(.setNext(renderItem))
            } else {
                requestedNextID = nil
                renderer.mailbox.post(.setNext(nil))
            }
            return
        }
    }

    // MARK: - Render events

    func handleRenderEvents() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while let event = events.pop() {
            // The output's state is the device's, not a generation's: a load posted a moment
            // before must not make the player miss that the output failed or came back.
            switch event.kind {
            case .outputFailed, .outputLost: setOutputUnavailable(true)
            case .outputRestored: setOutputUnavailable(false)
            default: break
            }
            guard event.generation == generation else { continue }
            switch event.kind {
            case .started:
                guard let renderItem = handoffs[event.renderID] else { continue }
                rendererIdle = false
                if segments.contains(where: { $0.renderID == event.renderID }) { continue }
                segments.append(Segment(renderID: event.renderID, item: renderItem.item, start: event.streamFrame,
                                        itemStartFrame: renderItem.startFrame, sampleRate: renderItem.decoder.format.sampleRate))
                if requestedNextID == event.renderID { requestedNextID = nil }
                rendererIdle = false
            case .finished, .failed:
                if let index = segments.lastIndex(where: { $0.renderID == event.renderID }) {
                    segments[index].end = event.streamFrame
                    if event.kind == .failed {
                        segments[index].failure = handoffs[event.renderID]?.failure.withLock { $0 }
                    }
                }
            case .drained:
                rendererIdle = true
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
        if let item = currentItem, !currentItemAtEnd, let frame = currentFrame(), let decoder = openDecoder(for: item) {
            load(item, decoder: decoder, at: frame)
        } else {
            // The render thread waits for a load (it plays nothing until one comes).
            rendererIdle = true
        }
    }

    /// Records whether the output can be used; a new outage is announced once.
    private func setOutputUnavailable(_ unavailable: Bool) {
        guard unavailable != outputUnavailable else { return }
        outputUnavailable = unavailable
        NotificationCenter.default.post(name: unavailable ? Self.outputDidFailNotification : Self.outputDidRecoverNotification,
                                        object: self)
    }

    // MARK: - The audible timeline

    var currentAudibleSegment: Segment? {
        guard audibleIndex < segments.count, segments[audibleIndex].entered else { return nil }
        return segments[audibleIndex]
    }

    /// Advances `currentItem` and posts end-of-item notifications for everything now audible.
    func updateTimeline() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let snapshot = renderer.position.read()
        guard snapshot.generation == generation else { return }
        let audible = snapshot.audibleFrame(at: clock.now())
        while audibleIndex < segments.count {
            let segment = segments[audibleIndex]
            if !segment.entered {
                guard audible >= Double(segment.start) else { break }
                segments[audibleIndex].entered = true
                if segment.item != currentItem {
                    setCurrentItem(segment.item)
                    deliverToAllPeriodicObservers()
                }
            }
            guard let end = segment.end, audible >= Double(end) else { break }
            // The render thread reports an item's end and the next item's start one after the
            // other; a wake-up between the two must not take the next item for missing (that
            // would reload it over what is already written). Its start is on its way.
            if audibleIndex + 1 == segments.count, requestedNextID != nil, !rendererIdle { break }
            audibleIndex += 1
            itemDidEnd(segment, nextStarts: audibleIndex < segments.count)
        }
        // Forget what has been heard: the render thread let go of those items when it decoded past them,
        // so their decoders (open files) are released here, on the control queue.
        if audibleIndex > 0 && audibleIndex <= segments.count {
            for finished in segments[..<audibleIndex] where finished.renderID != requestedNextID {
                handoffs.removeValue(forKey: finished.renderID)
            }
            segments.removeFirst(audibleIndex)
            audibleIndex = 0
        }
    }

    private func itemDidEnd(_ segment: Segment, nextStarts: Bool) {
        let item = segment.item
        if let failure = segment.failure {
            item.markFailed(failure)
            postFailure(of: item, failure)
        } else {
            NotificationCenter.default.post(name: PlayerItem.didPlayToEndTimeNotification, object: item)
        }
        let action = actionAtItemEnd
        if segment.failure != nil || action == .advance {
            removeFromQueue(item, headIsOnItsWay: nextStarts)
            return
        }
        currentItemAtEnd = true
        lastReportedTime = nil
        if action == .pause {
            setPublished(\.rate, 0, \Published.rate)
            renderer.mailbox.post(.pause)
        }
        deliverToAllPeriodicObservers()
    }

    /// The audible frame of the current item, if it is being heard.
    func currentFrame() -> Int64? {
        guard let segment = currentAudibleSegment else { return nil }
        let snapshot = renderer.position.read()
        guard snapshot.generation == generation else { return segment.itemStartFrame }
        var played = Int64(snapshot.audibleFrame(at: clock.now())) - segment.start
        played = max(0, min(played, (segment.end ?? Int64.max) - segment.start))
        return segment.itemStartFrame + played
    }

    /// The audible position in the current item, in seconds; never runs backwards within an item.
    func audiblePosition() -> Double? {
        guard let item = currentItem else { return nil }
        var seconds: Double
        if currentItemAtEnd {
            seconds = item.duration?.seconds ?? 0
        } else if let segment = currentAudibleSegment {
            let snapshot = renderer.position.read()
            var played = snapshot.generation == generation ? snapshot.audibleFrame(at: clock.now()) - Double(segment.start) : 0
            played = max(0, min(played, Double((segment.end ?? Int64.max) - segment.start)))
            seconds = (Double(segment.itemStartFrame) + played) / Double(segment.sampleRate)
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
}

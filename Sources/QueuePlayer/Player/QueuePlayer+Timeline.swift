import Foundation

/// The player's side of the timeline, on its control queue: opening items and handing them to
/// the render thread (``load(_:decoder:at:)``, ``reconcileRenderer()``), taking in its events,
/// and acting on what ``Timeline`` says is heard (the current item, an item's end).
extension QueuePlayer {
    // MARK: - Loading items into the render thread

    /// Opens `item` for decoding; a failure fails the item and takes it out of the queue.
    /// Here, on the control queue (it may scan the file), unless it was opened ahead.
    func openDecoder(for item: PlayerItem) -> (any Decoder)? {
        if let opened = openedHead, opened.item == item {
            openedHead = nil
            return opened.decoder
        }
        let result = lookAhead.take(item)
            ?? Result { () throws(DecoderError) -> any Decoder in try decoderFactory.makeDecoder(for: item.url) }
        return accept(result, for: item)
    }

    /// The decoder `result` gives `item`, marked on it; nil if it failed (the item fails and
    /// leaves the queue).
    private func accept(_ result: Result<any Decoder, DecoderError>, for item: PlayerItem) -> (any Decoder)? {
        switch result {
        case .success(let decoder):
            item.markReady(decoder)
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
            self.reconcileRenderer()
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

    /// Starts a new generation: the render thread drops what it has and plays `item` from `frame`.
    func load(_ item: PlayerItem?, decoder: (any Decoder)?, at frame: Int64) {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let renderItem = timeline.startGeneration(with: item, decoder: decoder, at: frame)
        timeObservers.forgetBoundaryProgress()
        let next = renderItem.flatMap { preparedItem(after: $0.item) }
        timeline.requestNext(next)
        timeline.setRendererIdle(renderItem == nil)
        renderer.mailbox.post(.load(generation: timeline.generation, item: renderItem, next: next, playing: rate != 0))
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
                return timeline.handOver(candidate, decoder: decoder, startFrame: 0)
            }
        }
    }

    /// Brings the render thread in line with the queue after any change.
    func reconcileRenderer() {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        while true {
            let queued = items()
            guard let head = queued.first else {
                if !timeline.rendererIdle || !timeline.isEmpty { load(nil, decoder: nil, at: 0) }
                return
            }
            if timeline.isHeldAtEnd { return }
            // The items not yet finished audibly must be the head of the queue, in order.
            let pending = timeline.pendingItems
            let consistent = !pending.isEmpty && pending.count <= queued.count && zip(pending, queued).allSatisfy { $0 == $1 }
            guard consistent, !timeline.rendererIdle else {
                let frame = head == timeline.audibleItem ? currentFrame() ?? 0 : 0
                guard let decoder = openDecoder(for: head) else { continue }
                load(head, decoder: decoder, at: frame)
                return
            }
            // The render thread's latest item is in the queue: make sure the right one follows it.
            let desired = actionAtItemEnd == .advance && pending.count < queued.count ? queued[pending.count] : nil
            if timeline.latestIsDecoded && desired == nil { return }
            if desired == timeline.requestedNextItem { return }
            // What follows: `desired` once it is open; meanwhile nothing (not an item the queue
            // no longer has next).
            var follower: RenderItem?
            if let desired, let result = openedAhead(desired) {
                guard let decoder = accept(result, for: desired) else { continue }
                follower = timeline.handOver(desired, decoder: decoder, startFrame: 0)
            }
            if follower == nil && timeline.requestedNextItem == nil { return }
            timeline.requestNext(follower)
            renderer.mailbox.post(.setNext(follower))
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
            guard event.generation == timeline.generation else { continue }
            switch event.kind {
            case .started, .finished, .failed, .drained:
                timeline.record(event)
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
        if let item = currentItem, !timeline.isHeldAtEnd, let frame = currentFrame(), let decoder = openDecoder(for: item) {
            load(item, decoder: decoder, at: frame)
        } else {
            // The render thread waits for a load (it plays nothing until one comes).
            timeline.setRendererIdle(true)
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

    /// The stream's position as the player looks at it: the render thread's latest measurement
    /// brought up to date with the device (``Renderer/currentPosition(answer:)``), and the clock's
    /// time just after. A wake-up reads it once and uses it throughout (again only if an item
    /// entered or ended meanwhile), so a tick asks the device once.
    struct PositionReading {
        var position: StreamPosition.Snapshot
        var now: UInt64
    }

    func readPosition() -> PositionReading {
        let position = renderer.currentPosition(answer: &deviceAnswer)
        return PositionReading(position: position, now: clock.now())
    }

    /// Advances `currentItem` and posts end-of-item notifications for everything audible at
    /// `reading` (read now if nil). Returns true if anything was heard to change (an item
    /// entered or ended): what that ran (notifications, observation handlers) may have
    /// changed the queue, so a reading taken before is stale.
    @discardableResult
    func updateTimeline(_ reading: PositionReading? = nil) -> Bool {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let reading = reading ?? readPosition()
        guard let audible = timeline.audibleFrame(in: reading.position, at: reading.now) else { return false }
        var changed = false
        while let step = timeline.advance(toAudibleFrame: audible) {
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
        timeline.forgetHeard()
        return changed
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
        timeline.holdAtEnd()
        if action == .pause {
            setPublished(\.rate, 0, \Published.rate)
            renderer.mailbox.post(.pause)
        }
        deliverToAllPeriodicObservers()
    }

    /// The audible frame of the current item, if it is being heard.
    func currentFrame() -> Int64? {
        let reading = readPosition()
        return timeline.audibleItemFrame(in: reading.position, at: reading.now)
    }

    /// The audible position in the current item at `reading` (read now if nil), in seconds;
    /// never runs backwards within an item.
    func audiblePosition(_ reading: PositionReading? = nil) -> Double? {
        let reading = reading ?? readPosition()
        return timeline.audibleSeconds(of: currentItem, in: reading.position, at: reading.now)
    }
}

import Foundation
import Synchronization

/// The render thread: pulls PCM from the current item's decoder and writes it
/// to the sink, continuing into the next item without a gap.
///
/// Its loop does nothing but decode and write. It takes no lock shared with
/// observers, allocates nothing per buffer, and logs nothing: commands arrive
/// through ``RenderMailbox``, item boundaries leave through ``RenderEventRing``,
/// and the stream position through ``StreamPosition``.
///
/// Owner: the render thread (`run()`, after ``start()``; checked by `renderThread` in debug
/// builds); other threads reach it only through ``mailbox`` (its own lock), ``position``,
/// ``phase`` and ``gain`` (atomics).
final class Renderer: @unchecked Sendable {
    /// Where the render thread is, for a virtual clock's quiescence check.
    enum Phase: UInt8 {
        case working, waitingForCommand, inSink
    }

    /// Frames decoded and written per step (about 23 ms at 44.1 kHz).
    static let framesPerChunk = 1024

    /// The first wait before opening an output again after it failed. Short, because a sound
    /// server that restarts is back within moments; doubled per failed attempt up to
    /// ``longestRetryDelay``, so a device that stays away costs a few opens a second at most,
    /// and one that returns is played to again within that much.
    static let firstRetryDelay: UInt64 = 100_000_000
    static let longestRetryDelay: UInt64 = 800_000_000

    let mailbox: RenderMailbox
    let position = StreamPosition()
    let phase = Atomic<UInt8>(Phase.working.rawValue)
    /// The software volume's gain in 1/1024 (``SoftwareVolume``), read once per chunk.
    let gain = Atomic<Int32>(SoftwareVolume.unity)
    /// A fade's gain in 1/1024 (a sleep timer's), a factor of its own multiplied into
    /// ``gain`` once per chunk, so the volume a client set is untouched by it.
    let fade = Atomic<Int32>(SoftwareVolume.unity)
    /// `QueuePlayer.automaticallyWaitsToMinimizeStalling`: a network item that waits for data
    /// resumes only once it is likely to keep up, not at its first bytes.
    let waitsToMinimizeStalls = Atomic<Bool>(true)
    /// The playback rate wanted (a `Float`'s bits; ``QueuePlayer/rate`` while it is not 0),
    /// read once per chunk. At 1 the stretcher is out of the path.
    let pace = Atomic<UInt32>(Float(1).bitPattern)
    /// ``QueuePlayer/skipsSilence``: an item's own setting wins.
    let skipsSilence = Atomic<Bool>(false)
    private let sink: any AudioSink
    private let events: RenderEventRing
    private let finished = DispatchSemaphore(value: 0)

    /// The thread running `run()`: the only one to touch the state below once started.
    private let renderThread = ThreadOwner()
    // Render-thread state: touched only by `run()` after `start()`.
    private var current: RenderItem?
    private var next: RenderItem?
    private var isPlaying = false
    private var generation: UInt64 = 0
    private var streamFrame: Int64 = 0
    private var sinkFormat: AudioFormat?
    private var sinkPaused = false
    private var needsDrain = false
    /// Set while the output cannot be opened (or died under a write); cleared by the next open.
    private var outputUnavailable = false
    /// The wait before the next attempt to open an unavailable output: ``firstRetryDelay``
    /// doubling to ``longestRetryDelay``, back to zero once a write succeeds.
    private var retryDelay: UInt64 = 0
    /// No attempt to open the output before this time (the sink's clock).
    private var retryAt: UInt64 = 0
    /// The sink's underrun count when the player was last told of it.
    private var underrunsReported = 0
    /// Set once buffered audio was given back (``giveBackBufferedAudio(closingSink:held:)``): what the
    /// decoder holds is past the audible position, so nothing plays until the player reloads.
    private var awaitingReload = false
    /// Decoded frames in `buffer` not yet accepted by the sink: `pendingOffset..<pendingFrames`.
    private var pendingOffset = 0
    private var pendingFrames = 0
    private var pendingBytesPerFrame = 0
    /// The current item is a network item that waits for data (its first, or more after a stall).
    private var streamWaiting = false
    /// The wait was reported (``RenderEvent/Kind/bufferingStarted`` or ``RenderEvent/Kind/stalled``).
    private var streamWaitReported = false
    /// The current network item was reported decodable (``RenderEvent/Kind/bufferingEnded``) once.
    private var streamAnnounced = false
    /// The current item has given frames since it started.
    private var currentHasPlayed = false
    private let buffer: UnsafeMutableRawBufferPointer
    /// The pace stage (``PaceState``): the stretcher and where its output stands in the item.
    private var paced = PaceState()

    init(sink: any AudioSink, events: RenderEventRing) {
        self.sink = sink
        self.events = events
        mailbox = RenderMailbox(sink: sink)
        buffer = .allocate(byteCount: Self.framesPerChunk * 2 * MemoryLayout<Int16>.size * 4, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in
            setKernelThreadName("qp.render")
            run()
            finished.signal()
        }
        thread.name = "queueplayer.render"
        thread.qualityOfService = .userInteractive
        thread.stackSize = 1 << 20
        thread.start()
    }

    private let stopped = Atomic<Bool>(false)

    /// Ends the thread (after what was written has played) and waits for it. Idempotent.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        mailbox.post(.shutdown)
        finished.wait()
    }

    /// True when the thread is blocked until a command arrives or the (virtual) clock moves.
    func isQuiescent(sinkWaitsForTime: () -> Bool) -> Bool {
        // A posted command wakes the thread (``RenderMailbox/post(_:)``), so one still waiting means
        // it is busy; so does data it waited for.
        guard !mailbox.hasPending, !mailbox.hasDataWake else { return false }
        switch Phase(rawValue: phase.load(ordering: .acquiring)) {
        case .waitingForCommand: return true
        case .inSink: return sinkWaitsForTime()
        default: return false
        }
    }

    // MARK: - The loop

    private func run() {
        renderThread.claim()
        while true {
            if mailbox.hasPending {
                if !handleCommands() { break }
                continue
            }
            guard isPlaying, !awaitingReload else {
                waitForCommand()
                continue
            }
            if pendingOffset < pendingFrames {
                writePending()
                continue
            }
            if paced.holdsOutput {
                readStretched()
                continue
            }
            if let skipper = paced.skipper, skipper.readableFrames > 0 {
                readSkipped()
                continue
            }
            guard let item = current else {
                if needsDrain { drainStep() } else { waitForCommand() }
                continue
            }
            if item.decoder.isStreaming, !streamCanDecode(item) { continue }
            if sinkFormat != item.decoder.format {
                if !prepareSink(for: item.decoder.format) { continue }
            }
            if !updatePace(for: item) { continue }
            decodeChunk(of: item)
        }
        // Let what was written play out (an output that buffers, like alsa-lib's file plugin,
        // only then has all of it), unless playback is paused.
        if isPlaying && sinkFormat != nil {
            while !sink.waitUntilDrained(timeoutNanoseconds: 10_000_000) {}
        }
        sink.close()
    }

    /// Decodes the next chunk of `item` into the buffer (or moves on at its end).
    private func decodeChunk(of item: RenderItem) {
        renderThread.check()
        let frames: Int
        do {
            frames = try item.decoder.decode(into: buffer, maximumFrames: Self.framesPerChunk)
        } catch {
            item.failure.withLock { $0 = error }
            report(.failed, item.id, at: paced.boundaryFrame(streamFrame: streamFrame))
            moveToNextItem()
            return
        }
        if frames == 0 {
            if item.decoder.isStarved {
                streamWaiting = true
                return
            }
            if let skipper = paced.skipper, !skipper.isEmpty {
                // The item's end: what skip silence held goes out first.
                skipper.letOut()
                return
            }
            report(.finished, item.id, at: paced.boundaryFrame(streamFrame: streamFrame))
            moveToNextItem()
            return
        }
        currentHasPlayed = true
        if item.decoder.isStarved { streamWaiting = true }
        let skips = item.item.skipsSilence ?? skipsSilence.load(ordering: .relaxed)
        if skips && paced.skipper?.format != item.decoder.format { preparePace() }
        if let skipper = paced.skipper, skips || !skipper.isEmpty {
            // Through skip silence (classed before the volume): the loop reads what it lets out.
            let samples = UnsafePointer(buffer.baseAddress!.assumingMemoryBound(to: Int16.self))
            let dropped = skipper.write(samples, frameCount: frames, skipping: skips)
            if dropped > 0 { item.item.addSilenceSkipped(frames: dropped) }
            return
        }
        give(frames, of: item.decoder.format)
    }

    /// `frames` frames in the buffer go on, at the volume, to the output or the stretcher.
    private func give(_ frames: Int, of format: AudioFormat) {
        pendingOffset = 0
        pendingFrames = frames
        pendingBytesPerFrame = format.bytesPerFrame
        // The volume, the item's own gain (ReplayGain, a loudness target) and a fade, as one factor.
        let itemGain = current?.item.gainFactor.load(ordering: .relaxed) ?? SoftwareVolume.unity
        let gain = SoftwareVolume.combine(SoftwareVolume.combine(gain.load(ordering: .relaxed), itemGain),
                                          fade.load(ordering: .relaxed))
        if gain != SoftwareVolume.unity {
            let samples = buffer.bindMemory(to: Int16.self)
            SoftwareVolume.apply(gain: gain, to: UnsafeMutableBufferPointer(rebasing: samples[0..<(frames * format.channelCount)]))
        }
        paced.took(frames)
        if paced.inPath {
            // The chunk goes through the stretcher: what it gives back is written instead.
            pendingFrames = 0
            paced.stretch(UnsafeRawBufferPointer(rebasing: buffer[0..<(frames * pendingBytesPerFrame)]), frameCount: frames)
        }
    }

    /// Reads what skip silence lets out into the buffer, to go on; a stretch it dropped before
    /// it is a jump of the item's time where it is heard.
    private func readSkipped() {
        renderThread.check()
        guard let skipper = paced.skipper else { return }
        guard let item = current else {
            // Nothing to hear it in (not reached: an item's end waits for what it held).
            return skipper.reset()
        }
        let out = buffer.baseAddress!.assumingMemoryBound(to: Int16.self)
        let (frames, skipped) = skipper.read(into: out, maximumFrames: Self.framesPerChunk)
        if skipped > 0 {
            let itemFrame = paced.itemFrame(at: Double(paced.fed)) + Int64(skipped)
            paced.jump(toItemFrame: itemFrame)
            reportPace(of: item, at: paced.boundaryFrame(streamFrame: streamFrame), itemFrame: itemFrame, rate: Double(paced.rate))
        }
        give(frames, of: item.decoder.format)
    }

    /// Reads what the stretcher has made into the buffer, to be written.
    private func readStretched() {
        renderThread.check()
        guard let bytesPerFrame = paced.stretcher?.format.bytesPerFrame else { return }
        pendingOffset = 0
        pendingFrames = paced.read(into: buffer)
        pendingBytesPerFrame = bytesPerFrame
    }

    /// Brings the stretcher in line with the rate wanted and `item`'s pitch algorithm before a
    /// chunk of it is decoded, reporting where the new pace starts (``RenderEvent/Kind/paced``).
    /// False while a change must wait: for the stretcher to be made (``preparePace()``),
    /// or for what it holds of the previous item to be heard out (a piece of pace belongs to
    /// one item).
    private func updatePace(for item: RenderItem) -> Bool {
        let wanted = Float(bitPattern: pace.load(ordering: .relaxed))
        let mode: TimeStretcher.Mode = item.item.audioTimePitchAlgorithm == .varispeed ? .resample : .speed
        guard wanted != paced.rate || (wanted != 1 && mode != paced.mode) else { return true }
        if paced.inPath && !paced.hasPassedItemStart { return true }
        if wanted == 1 || (paced.inPath && mode != paced.mode) {
            // Out of the path (or out and, at the next chunk, in again in the other mode): what
            // the stretcher holds is made into output at the old rate, read before the next
            // chunk; the item plays at 1 from the frame after it.
            let at = paced.leave()
            reportPace(of: item, at: at, itemFrame: paced.itemFrame(at: Double(paced.fed)), rate: 1)
            return true
        }
        if paced.stretcher?.format != item.decoder.format {
            // Normally made ahead (on the player's command, or at the change of format); if
            // not, here, once. Without one (Sonic could not allocate) the item plays at 1.
            preparePace()
            if paced.stretcher?.format != item.decoder.format { return !paced.holdsOutput }
        }
        let at = paced.enter(rate: wanted, mode: mode)
        reportPace(of: item, at: at, itemFrame: paced.itemFrame(at: paced.consumed), rate: Double(wanted))
        return true
    }

    /// Makes the stretcher and skip silence for the sink's format, if it has none of it (the
    /// render thread, on a command or at a change of format: not per chunk).
    private func preparePace() {
        guard let format = sinkFormat else { return }
        if paced.stretcher?.format != format, !paced.holdsOutput {
            paced.replaceStretcher(with: TimeStretcher(format: format))
        }
        if paced.skipper?.format != format, paced.skipper?.isEmpty ?? true {
            paced.skipper = SilenceSkipper(format: format, chunkCapacity: Self.framesPerChunk)
        }
    }

    private func reportPace(of item: RenderItem, at frame: Int64, itemFrame: Int64, rate: Double) {
        events.push(RenderEvent(kind: .paced, generation: generation, renderID: item.id, streamFrame: frame,
                                itemFrame: itemFrame, rate: rate))
    }

    /// Hands decoded frames to the sink: one (possibly blocking) write.
    private func writePending() {
        renderThread.check()
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[(pendingOffset * pendingBytesPerFrame)..<(pendingFrames * pendingBytesPerFrame)])
        setPhase(.inSink)
        let accepted: Int
        do {
            accepted = try sink.write(chunk, frameCount: pendingFrames - pendingOffset)
        } catch {
            setPhase(.working)
            outputLost()
            return
        }
        setPhase(.working)
        guard accepted > 0 else {
            // Interrupted, or the sink wants the position looked at again before it has room.
            publish(running: true)
            return
        }
        pendingOffset += accepted
        streamFrame += Int64(accepted)
        retryDelay = 0
        let underruns = sink.underruns
        if underruns != underrunsReported {
            underrunsReported = underruns
            report(.underrunsRecovered, current?.id ?? 0)
        }
        publish(running: true)
    }

    /// Whether the current network item may be decoded now. While it waits for data (its first,
    /// or after its buffer ran dry) the output plays out what it holds, in short steps that look
    /// at the data again; then the wait is reported once (the time stands still) and the thread
    /// sleeps until the stream's next bytes or a command wake it: nothing spins.
    private func streamCanDecode(_ item: RenderItem) -> Bool {
        renderThread.check()
        // Whatever woke the thread, it looks at the data now.
        mailbox.takeDataWake()
        let waits = waitsToMinimizeStalls.load(ordering: .relaxed)
        if item.decoder.availability(waitingToMinimizeStalls: waits && streamWaiting) == .ready {
            if streamWaiting || !streamAnnounced {
                streamWaiting = false
                streamWaitReported = false
                streamAnnounced = true
                report(.bufferingEnded, item.id)
            }
            return true
        }
        streamWaiting = true
        if !playOutStep() { return false }
        if !streamWaitReported {
            streamWaitReported = true
            publish(running: false, delay: 0)
            report(currentHasPlayed ? .stalled : .bufferingStarted, item.id)
        }
        if item.decoder.willWaitForData() { waitForCommand() }
        return false
    }

    /// Plays out a step (10 ms) of what the sink holds in the current format; true once nothing is left.
    private func playOutStep() -> Bool {
        guard sinkFormat != nil && sink.delay() > 0 else { return true }
        setPhase(.inSink)
        let drained = sink.waitUntilDrained(timeoutNanoseconds: 10_000_000)
        setPhase(.working)
        publish(running: true)
        return drained
    }

    /// A new current item: nothing of it waited or played yet.
    private func resetStreamState() {
        streamWaiting = false
        streamWaitReported = false
        streamAnnounced = false
        currentHasPlayed = false
    }

    private func moveToNextItem() {
        resetStreamState()
        let boundary = paced.boundaryFrame(streamFrame: streamFrame)
        current = next
        next = nil
        if let current {
            begin(current, at: boundary)
        } else {
            needsDrain = true
            // The last item's end is still in the stretcher: out it comes, at the rate it had.
            if paced.inPath { paced.flushForEnd() }
        }
    }

    /// `item` follows, its first frame heard at stream frame `boundary`.
    private func begin(_ item: RenderItem, at boundary: Int64) {
        paced.beginItem(startFrame: item.startFrame)
        if paced.inPath, paced.stretcher?.format != item.decoder.format {
            // Another format: the stretcher gives out what it holds before the sink changes.
            paced.flushForEnd()
        }
        report(.started, item.id, at: boundary, rate: Double(paced.rate))
    }

    /// Plays out what is buffered, in short steps so commands are still seen.
    private func drainStep() {
        renderThread.check()
        setPhase(.inSink)
        let drained = sink.waitUntilDrained(timeoutNanoseconds: 10_000_000)
        setPhase(.working)
        if drained {
            needsDrain = false
            publish(running: false, delay: 0)
            report(.drained, 0)
        } else {
            publish(running: true)
        }
    }

    /// Makes the sink match `format`, playing out the previous format first. Returns false to retry later.
    private func prepareSink(for format: AudioFormat) -> Bool {
        renderThread.check()
        if outputUnavailable {
            let now = sink.clock.now()
            if now < retryAt {
                waitForCommand(nanoseconds: retryAt - now)
                return false
            }
        }
        if !playOutStep() { return false }
        do {
            try sink.configure(format)
        } catch {
            openFailed()
            return false
        }
        sinkFormat = format
        sinkPaused = false
        if Float(bitPattern: pace.load(ordering: .relaxed)) != 1 || paced.stretcher != nil || skipsSilence.load(ordering: .relaxed) {
            preparePace()
        }
        if outputUnavailable {
            outputUnavailable = false
            report(.outputRestored, current?.id ?? 0)
        }
        publish(running: true, delay: 0, rate: format.sampleRate)
        return true
    }

    /// The output cannot be opened: nothing was lost (nothing is buffered in this format);
    /// the next attempt waits for the back-off, while commands are still answered.
    private func openFailed() {
        closeSink()
        publish(running: false, delay: 0)
        if !outputUnavailable {
            outputUnavailable = true
            report(.outputFailed, current?.id ?? 0)
        }
        scheduleRetry()
    }

    /// A write failed for good (the device or its sound server went away): what the device
    /// held is lost with it, and the decoder is past the audible position. Like
    /// ``giveBackBufferedAudio(closingSink:held:)``, the render thread reports where playback
    /// was audible and plays nothing until the player reloads from there; the reload then
    /// waits for the output to open again.
    private func outputLost() {
        // The last published measurement, carried forward to now: where the listener was.
        let audible = min(streamFrame, Int64(position.read().audibleFrame(at: sink.clock.now())))
        stopUntilReloaded(closingSink: true)
        outputUnavailable = true
        publish(running: false, delay: Int(streamFrame - audible))
        events.push(RenderEvent(kind: .outputLost, generation: generation, renderID: current?.id ?? 0, streamFrame: audible))
        scheduleRetry()
    }

    /// What was decoded is past the audible position (the device's audio is gone, or given
    /// back): drops the frames not yet written, closing the sink first if `closingSink`, and
    /// plays nothing until the player reloads.
    private func stopUntilReloaded(closingSink: Bool) {
        if closingSink { closeSink() }
        pendingOffset = 0
        pendingFrames = 0
        awaitingReload = true
    }

    /// Closes the sink; the next chunk to play opens it again (``prepareSink(for:)``).
    private func closeSink() {
        sink.close()
        sinkFormat = nil
        sinkPaused = false
    }

    private func scheduleRetry() {
        retryDelay = retryDelay == 0 ? Self.firstRetryDelay : min(retryDelay * 2, Self.longestRetryDelay)
        retryAt = sink.clock.now() + retryDelay
    }

    // MARK: - Commands

    /// Applies waiting commands; returns false on shutdown.
    private func handleCommands() -> Bool {
        renderThread.check()
        for command in mailbox.take() {
            switch command {
            case let .load(newGeneration, item, nextItem, playing):
                if sinkFormat != nil {
                    sink.flush()
                    if sinkPaused { sink.resume() }
                }
                sinkPaused = false
                awaitingReload = false
                pendingOffset = 0
                pendingFrames = 0
                generation = newGeneration
                streamFrame = 0
                paced.restart(scratch: buffer, startFrame: item?.startFrame ?? 0)
                resetStreamState()
                current = item
                next = nextItem
                needsDrain = false
                isPlaying = playing
                if let item {
                    if item.startFrame > 0 {
                        do {
                            try item.decoder.seek(toFrame: item.startFrame)
                        } catch {
                            item.failure.withLock { $0 = error }
                            report(.started, item.id)
                            report(.failed, item.id)
                            moveToNextItem()
                            continue
                        }
                    }
                    report(.started, item.id)
                }
                publish(running: playing && item != nil, delay: 0)
            case let .setNext(item):
                if current == nil, let item, needsDrain || !isPlaying {
                    // The previous item already ended: continue straight into this one.
                    needsDrain = false
                    resetStreamState()
                    current = item
                    begin(item, at: paced.boundaryFrame(streamFrame: streamFrame))
                } else {
                    next = item
                }
            case .play:
                isPlaying = true
                if sinkPaused { sink.resume() }
                sinkPaused = false
                publish(running: !awaitingReload && (current != nil || needsDrain))
            case .pause:
                guard isPlaying else { continue }
                isPlaying = false
                if sinkFormat != nil {
                    // Asked first: a device that cannot pause in place drops its buffer, and
                    // its delay with it, but the frames it held were not heard.
                    let held = sink.delay()
                    if sink.pause() {
                        sinkPaused = true
                        publish(running: false)
                    } else {
                        giveBackBufferedAudio(closingSink: false, held: held)
                    }
                } else {
                    publish(running: false)
                }
            case .preparePace:
                preparePace()
            case .releaseOutput:
                guard !isPlaying, sinkFormat != nil else { continue }
                giveBackBufferedAudio(closingSink: true, held: sink.delay())
            case .shutdown:
                return false
            }
        }
        return true
    }

    /// Drops what the device holds, while paused, leaving the position where it was audible:
    /// the player reloads the current item from there (``RenderEvent/Kind/droppedOnPause``).
    /// `held` is what the device held when it stopped (its delay, asked before a pause that
    /// may have dropped it).
    private func giveBackBufferedAudio(closingSink: Bool, held: Int) {
        stopUntilReloaded(closingSink: closingSink)
        publish(running: false, delay: held)
        events.push(RenderEvent(kind: .droppedOnPause, generation: generation, renderID: current?.id ?? 0,
                                streamFrame: streamFrame - Int64(held)))
    }

    private func waitForCommand() {
        // Data that arrived meanwhile is looked at when the thread next decodes.
        mailbox.takeDataWake()
        setPhase(.waitingForCommand)
        mailbox.waitForCommand()
        setPhase(.working)
    }

    /// Waits for a command, or `nanoseconds` at most.
    private func waitForCommand(nanoseconds: UInt64) {
        setPhase(.waitingForCommand)
        mailbox.waitForCommand(timeoutNanoseconds: nanoseconds)
        setPhase(.working)
    }

    // MARK: - Publishing

    private func report(_ kind: RenderEvent.Kind, _ id: UInt64) {
        events.push(RenderEvent(kind: kind, generation: generation, renderID: id, streamFrame: streamFrame))
    }

    /// An item's boundary, at `frame` of the stream (where the stretcher's output reaches it).
    private func report(_ kind: RenderEvent.Kind, _ id: UInt64, at frame: Int64, rate: Double = 1) {
        events.push(RenderEvent(kind: kind, generation: generation, renderID: id, streamFrame: frame, rate: rate))
    }

    private func publish(running: Bool, delay: Int? = nil, rate: Int? = nil) {
        var snapshot = StreamPosition.Snapshot()
        snapshot.generation = generation
        snapshot.framesWritten = streamFrame
        if let delay {
            snapshot.delay = Int64(delay)
        } else {
            let measured = sink.measureDelay()
            snapshot.delay = Int64(measured.delay)
            snapshot.played = measured.played
        }
        snapshot.measuredAt = sink.clock.now()
        snapshot.sampleRate = rate ?? sinkFormat?.sampleRate ?? 0
        snapshot.isRunning = running
        position.publish(snapshot)
    }

    private func setPhase(_ newPhase: Phase) {
        phase.store(newPhase.rawValue, ordering: .releasing)
    }
}

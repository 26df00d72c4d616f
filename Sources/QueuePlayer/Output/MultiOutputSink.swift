import Synchronization

/// Several outputs played at once, each switched on or off while playing: MPD's
/// `MultipleOutputs` behind the one ``AudioSink`` seam, so the render thread does not know
/// how many outputs there are.
///
/// The first output switched on and open, as the render thread last applied the switches,
/// paces the stream (its writes may wait, its ``delay()`` is the player's); every other one is written beside it without waiting
/// (``AudioSink/writeWithoutWaiting(_:frameCount:)``). A real-time null sink is written
/// beside them all and paces when no output is enabled, so time goes on as it would with
/// one. An output that is switched on joins with the pacing output's delay
/// (``AudioSink/joinStream(aheadBy:)``), so if it takes over the pace the position stays
/// where it was; handing the pace to an output that was playing already moves it by no more
/// than the two outputs' delays differ.
///
/// Enabling and disabling is an atomic bit per output, set from any thread; the render
/// thread applies it at its next write: it opens (configures) an output that was enabled and
/// closes one that was disabled, so the others play on without a gap. An output that fails
/// to open, or fails under a write while another paces, is closed and tried again a second
/// later; only when every enabled output fails does the failure reach the player (which
/// retries as for a single device).
///
/// Owner: the render thread holds all state but the enabled bits and `publishedPace`
/// (atomics): every method but ``setEnabled(_:output:)``, ``isEnabled(output:)``,
/// ``playedFrames()`` and the waits' pair is called there.
///
/// How far the device has played (``AudioSink/measureDelay()``, ``AudioSink/playedFrames()``)
/// is the pacing output's, so the player follows a pacing device that stalls as it does with
/// one output. Each hand-over of the pace, and each opening and closing, gives the counts a
/// stream number of their own: two outputs' counts cannot be compared, even where their own
/// stream numbers agree.
public final class MultiOutputSink: AudioSink, @unchecked Sendable {
    /// The outputs, in id order.
    public let outputs: [any AudioSink]
    public let name: String
    public var clock: any PlaybackClock { fallback.clock }

    /// How long an output that failed waits before it is opened again.
    static let retryDelay: UInt64 = 1_000_000_000

    private let enabled: Atomic<UInt64>
    /// The pacing output as the render thread last chose it, for ``playedFrames()`` on other
    /// threads: the number of hand-overs so far shifted left by 8, or'ed with the output's
    /// index + 1 (0: the null sink paces). Stored by the render thread only.
    private let publishedPace = Atomic<UInt64>(0)
    private let fallback: NullAudioSink
    // Render thread only:
    private var format: AudioFormat?
    private var open: UInt64 = 0
    private var retryAt: [UInt64]

    /// Plays to `outputs` (at most 64, sharing one clock), those in `enabled` switched on.
    public init(outputs: [any AudioSink], enabled: [Bool]) {
        precondition(!outputs.isEmpty && outputs.count <= 64 && enabled.count == outputs.count)
        self.outputs = outputs
        name = outputs.map(\.name).joined(separator: " + ")
        var mask: UInt64 = 0
        for (index, on) in enabled.enumerated() where on { mask |= 1 << UInt64(index) }
        self.enabled = Atomic(mask)
        fallback = NullAudioSink(clock: outputs[0].clock, bufferDuration: 0.05)
        retryAt = Array(repeating: 0, count: outputs.count)
    }

    /// Switches output `index` on or off; the render thread applies it at its next write.
    public func setEnabled(_ on: Bool, output index: Int) {
        let bit: UInt64 = 1 << UInt64(index)
        if on {
            enabled.bitwiseOr(bit, ordering: .releasing)
        } else {
            enabled.bitwiseAnd(~bit, ordering: .releasing)
        }
        // A pacing write waiting for room returns, so the change applies within a write.
        for output in outputs { output.interruptWrite() }
        fallback.interruptWrite()
    }

    /// Whether output `index` is switched on.
    public func isEnabled(output index: Int) -> Bool {
        enabled.load(ordering: .acquiring) & (1 << UInt64(index)) != 0
    }

    // MARK: - AudioSink

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        self.format = format
        try fallback.configure(format)
        for index in outputs.indices { retryAt[index] = 0 }
        var firstError: AudioSinkError?
        let wanted = enabled.load(ordering: .acquiring)
        for index in outputs.indices {
            let bit: UInt64 = 1 << UInt64(index)
            if wanted & bit == 0 {
                if open & bit != 0 { close(index) }
                continue
            }
            do {
                try outputs[index].configure(format)
                open |= bit
            } catch {
                close(index)
                retryAt[index] = clock.now() + Self.retryDelay
                firstError = firstError ?? error
            }
        }
        publishPace(afresh: true)
        // Every enabled output failed: the player waits and retries, as for one device.
        if let firstError, open & wanted == 0 {
            fallback.close()
            throw firstError
        }
    }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        applySwitches()
        let pacer = publishPace()
        let accepted: Int
        if let pacer {
            accepted = try outputs[pacer].write(samples, frameCount: frameCount)
        } else {
            accepted = try fallback.write(samples, frameCount: frameCount)
        }
        guard accepted > 0 else { return 0 }
        let taken = UnsafeRawBufferPointer(rebasing: samples[0..<(accepted * (format?.bytesPerFrame ?? 0))])
        if pacer != nil { _ = try? fallback.writeWithoutWaiting(taken, frameCount: accepted) }
        for index in outputs.indices where index != pacer && isOpen(index) {
            do {
                _ = try outputs[index].writeWithoutWaiting(taken, frameCount: accepted)
            } catch {
                close(index)
                retryAt[index] = clock.now() + Self.retryDelay
            }
        }
        return accepted
    }

    public func interruptWrite() {
        for output in outputs { output.interruptWrite() }
        fallback.interruptWrite()
    }

    public func delay() -> Int {
        pacingIndex.map { outputs[$0].delay() } ?? fallback.delay()
    }

    public func framesAheadOfClock() -> Int {
        pacingIndex.map { outputs[$0].framesAheadOfClock() } ?? fallback.framesAheadOfClock()
    }

    public func measureDelay() -> (delay: Int, played: PlayedFrames?) {
        guard let pacer = publishPace() else { return (fallback.delay(), nil) }
        let measured = outputs[pacer].measureDelay()
        return (measured.delay, measured.played.map { Self.tagged($0, pace: publishedPace.load(ordering: .relaxed)) })
    }

    /// The answer of the output the render thread last published as pacing; nil while the
    /// null sink paces. An answer from an output the pace has just left carries the stream
    /// number of that hand-over, which the render thread's newer measurements do not: the
    /// player does not use it.
    public func playedFrames() -> PlayedFrames? {
        let pace = publishedPace.load(ordering: .acquiring)
        let slot = Int(pace & 0xFF)
        guard slot > 0, let played = outputs[slot - 1].playedFrames() else { return nil }
        return Self.tagged(played, pace: pace)
    }

    /// Whether a flush takes back what the output the render thread last published as pacing
    /// holds (the null sink's, while it paces: yes).
    public var flushTakesBackWrittenAudio: Bool {
        let slot = Int(publishedPace.load(ordering: .acquiring) & 0xFF)
        return slot > 0 ? outputs[slot - 1].flushTakesBackWrittenAudio : true
    }

    /// The period of the output the render thread last published as pacing (0 while the null sink paces).
    public var positionPeriod: UInt64 {
        let slot = Int(publishedPace.load(ordering: .acquiring) & 0xFF)
        return slot > 0 ? outputs[slot - 1].positionPeriod : 0
    }

    public func pause() -> Bool {
        _ = fallback.pause()
        var heldInPlace = true
        let pacer = pacingIndex
        for index in outputs.indices where isOpen(index) {
            let held = outputs[index].pause()
            if index == pacer { heldInPlace = held }
        }
        return heldInPlace
    }

    public func resume() {
        fallback.resume()
        for index in outputs.indices where isOpen(index) { outputs[index].resume() }
    }

    public func flush() {
        fallback.flush()
        for index in outputs.indices where isOpen(index) { outputs[index].flush() }
    }

    /// Each output in turn, the pacing one first: the wait is bounded per call, never a spin.
    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool {
        if let pacer = pacingIndex, !outputs[pacer].waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) { return false }
        for index in outputs.indices where isOpen(index) && index != pacingIndex {
            if !outputs[index].waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) { return false }
        }
        return fallback.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds)
    }

    public func close() {
        for index in outputs.indices { close(index) }
        fallback.close()
        format = nil
        publishPace(afresh: true)
    }

    /// The waits of the output the render thread last published as pacing (the null sink's
    /// while none is open): the others are written without waiting.
    public var isWaitingForTime: Bool {
        let slot = Int(publishedPace.load(ordering: .acquiring) & 0xFF)
        return slot > 0 ? outputs[slot - 1].isWaitingForTime : fallback.isWaitingForTime
    }

    public func stopWaitingForTime() {
        for output in outputs { output.stopWaitingForTime() }
        fallback.stopWaitingForTime()
    }

    public var underruns: Int {
        var total = 0
        for output in outputs { total += output.underruns }
        return total
    }

    // MARK: - Private (render thread)

    /// The first open output; nil when none is (the null sink paces). Outputs are opened and
    /// closed as they are switched on and off by the render thread, between two writes
    /// (``applySwitches()``), so the pacer changes there, not when another thread switches.
    private var pacingIndex: Int? {
        open == 0 ? nil : open.trailingZeroBitCount
    }

    /// ``pacingIndex``, published for ``playedFrames()``; a change counts as a hand-over, and
    /// so does every call `afresh` (the outputs were opened or closed).
    @discardableResult
    private func publishPace(afresh: Bool = false) -> Int? {
        let pacer = pacingIndex
        let slot = UInt64(pacer.map { $0 + 1 } ?? 0)
        let published = publishedPace.load(ordering: .relaxed)
        if afresh || published & 0xFF != slot {
            publishedPace.store(((published >> 8) &+ 1) << 8 | slot, ordering: .releasing)
        }
        return pacer
    }

    /// `played` with a stream number of the hand-over `pace` belongs to: the hand-over count
    /// in the top 24 bits, the output's own stream number below (a sink numbers its streams
    /// from 1 on, one per start of its device; 2^40 of them outlast any daemon).
    private static func tagged(_ played: PlayedFrames, pace: UInt64) -> PlayedFrames {
        var tagged = played
        tagged.stream = (pace >> 8) << 40 | (played.stream & ((1 << 40) - 1))
        return tagged
    }

    private func isOpen(_ index: Int) -> Bool {
        open & (1 << UInt64(index)) != 0
    }

    /// Opens what was switched on (or is due for another try) and closes what was switched off.
    private func applySwitches() {
        let wanted = enabled.load(ordering: .acquiring)
        guard wanted != open, let format else { return }
        // What the stream is ahead of the clock: the pacing output's pace, which a newly
        // enabled output takes over so that the position carries on if it paces from now on.
        let ahead = framesAheadOfClock()
        for index in outputs.indices {
            let bit: UInt64 = 1 << UInt64(index)
            if wanted & bit == 0, open & bit != 0 {
                close(index)
            } else if wanted & bit != 0, open & bit == 0, clock.now() >= retryAt[index] {
                do {
                    try outputs[index].configure(format)
                    // Joining with the stream's delay: if it paces from now on, the position stays.
                    outputs[index].joinStream(aheadBy: ahead)
                    open |= bit
                } catch {
                    retryAt[index] = clock.now() + Self.retryDelay
                }
            }
        }
    }

    private func close(_ index: Int) {
        outputs[index].close()
        open &= ~(1 << UInt64(index))
    }
}

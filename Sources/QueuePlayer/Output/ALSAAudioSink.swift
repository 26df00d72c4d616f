import CALSA
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Audio output through alsa-lib's PCM API, to any device name alsa-lib knows
/// (`default`, `hw:0`, a plugin defined in an asoundrc, ...).
///
/// One stream per format, kept open across items, so items follow sample for sample. The
/// device is non-blocking: a write with no room waits in `poll(2)` on the device and on an
/// `eventfd` (``interruptWrite()``), so a command to the render thread is never held up by a
/// period; while the stream runs half full, chunks go to the device a period per write
/// (`staging`), which is what keeps ALSA's pulse plugin cheap.
///
/// Owner: the render thread holds the device (and ``close()`` after it stopped); other threads
/// read atomics, the device ``open(device:bufferTimeMicroseconds:)`` checked waits for the first
/// stream under `probed` (a `Mutex`), and ``playedFrames()`` reaches the device through `shared` (a `Mutex`),
/// discarding answers that raced a write (`streamChanges`). docs/ALSA.md has the measurements
/// and the history behind each of these choices.
public final class ALSAAudioSink: AudioSink, @unchecked Sendable {
    // `pcm`, `format`, `canPause` and `pollDescriptors` are touched by the render thread only
    // (and by `close()`, which the player calls after that thread has stopped).
    private var pcm: OpaquePointer?
    private var format: AudioFormat?
    private var canPause = false
    /// The device's poll descriptors followed by `interruption`'s, filled at `configure`
    /// (no allocation per write).
    private var pollDescriptors: [pollfd] = []
    /// How many of `pollDescriptors` are the device's (all but the last).
    private var devicePollCount: Int { max(0, pollDescriptors.count - 1) }
    /// The device's buffer, in frames (set at `configure`).
    private var bufferFrames = 1
    /// Frames accepted but not yet given to alsa-lib: `stagedFrames` of them at the start of
    /// `staging` (a period's worth, allocated at `configure`), written at once when the next
    /// chunk would not fit in `stagingTarget` (the period).
    private var staging: UnsafeMutableRawBufferPointer?
    private var stagedFrames = 0
    private var stagingTarget = 1
    /// Frames given to the device since its stream was last prepared (opened, flushed,
    /// dropped, recovered or drained); with the delay, they tell whether it has begun to play.
    private var framesSincePrepare = 0
    /// When the first frames since the stream was prepared went to the device (the clock's
    /// nanoseconds; 0: none yet).
    private var firstWriteAt: UInt64 = 0
    /// Whether the device has been seen playing since it was last prepared. Until then a
    /// wait for room is short (``startWaitMilliseconds``) and a write whose wait runs out
    /// returns 0: see ``waitLimit(_:)``.
    private var seenPlaying = false
    /// How deep the render thread is in ``changingStream(_:)`` (its calls nest).
    private var changeDepth = 0
    /// The device's `avail_min`: the room a waiting write wakes for (set at `configure`).
    private var wakeThreshold = 1
    /// Signalled by ``interruptWrite()``; read (reset) by the render thread when it wakes.
    private let interruption: Int32
    private let underrunCount = Atomic<Int>(0)
    private let writtenCount = Atomic<Int64>(0)
    private let openCount = Atomic<Int>(0)

    /// The open device, for ``playedFrames()`` on other threads: set by the render thread
    /// under this lock after opening, cleared under it before closing. (Kept as the handle's
    /// address, as a pointer is not `Sendable`; 0 when closed.)
    private let shared = Mutex<Int>(0)
    /// Odd while the render thread writes to the device or restarts its stream (the frames
    /// written and the delay do not match then); even otherwise.
    private let streamChanges = Atomic<UInt64>(0)
    /// The stream's number (``PlayedFrames/stream``): one more at each prepare.
    private let streamNumber = Atomic<UInt64>(0)
    /// Whether other threads may ask for the delay: the device was heard playing and
    /// answered the render thread since it was last prepared or paused. Before that, ALSA's
    /// pulse plugin may wait in `snd_pcm_delay` for the server's first timing update.
    private let answersOtherThreads = Atomic<Bool>(false)
    /// The open stream's period in nanoseconds (``positionPeriod``); set at `configure`.
    private let periodNanoseconds = Atomic<UInt64>(0)
    /// The device as ``open(device:bufferTimeMicroseconds:)`` opened it to see that it can be
    /// opened, for the first ``configure(_:)`` to take (its address; 0: none): start-up opens
    /// the device once. Closed if nothing takes it within ``probeKeptNanoseconds``, so a daemon
    /// started with nothing to play does not hold the device.
    private let probed = Mutex<Int>(0)

    /// The alsa-lib device name.
    public let device: String
    public let clock: any PlaybackClock = RealTimeClock.shared
    public var name: String { "alsa:\(device)" }

    /// The device buffer the sink asks for, in microseconds.
    public let bufferTimeMicroseconds: UInt32

    /// The buffer asked for unless told otherwise: 500 ms, mpd's. Much less makes ALSA's
    /// pulse plugin stall at the start of a stream.
    public static let defaultBufferTimeMicroseconds: UInt32 = 500_000

    /// The buffer times a user may ask for (the daemon's `--buffer-time`). Below 100 ms the
    /// pulse plugin stalls at a stream's start; above 5 s a volume change (the software
    /// volume scales samples before they reach the buffer) is heard too late to be of use.
    public static let bufferTimeRange: ClosedRange<UInt32> = 100_000...5_000_000

    /// Creates a sink for `device`; nothing is opened until the first ``configure(_:)``.
    public init(device: String = "default", bufferTimeMicroseconds: UInt32 = defaultBufferTimeMicroseconds) {
        self.device = device
        self.bufferTimeMicroseconds = bufferTimeMicroseconds
        interruption = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        calsa_silence_errors()
    }

    deinit {
        close()
        closeProbed()
        if interruption >= 0 { Glibc.close(interruption) }
    }

    /// The period asked for, as a fraction of the buffer: half. A device that wants more
    /// periods (the pulse plugin wants three at least) makes them shorter.
    static let periodsPerBuffer: UInt32 = 2

    /// How many underruns the sink has recovered from.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }

    /// Every frame alsa-lib has accepted, across reopenings.
    public var framesWritten: Int64 { writtenCount.load(ordering: .relaxed) }

    /// How many times the device has been opened (one per format change, plus reopenings).
    public var opens: Int { openCount.load(ordering: .relaxed) }

    /// True while the device is open.
    public var isOpen: Bool { pcm != nil }

    /// True while the stream has run dry (`SND_PCM_STATE_XRUN`): the next write recovers it
    /// and counts an underrun. alsa-lib updates the state when asked for the delay or the
    /// space available. Render thread only, like every call on the device.
    public var isStarved: Bool {
        guard let pcm else { return false }
        return snd_pcm_state(pcm) == SND_PCM_STATE_XRUN
    }

    /// How long a device opened by ``open(device:bufferTimeMicroseconds:)`` waits for the first
    /// ``configure(_:)`` before it is closed: a daemon given something to play configures within
    /// milliseconds.
    static let probeKeptNanoseconds: UInt64 = 2_000_000_000

    /// A sink for `device` if the device can be opened, with the device left open for the first
    /// ``configure(_:)`` (closed after ``probeKeptNanoseconds`` if none comes): the check that a
    /// bad device is an error before anything plays, without a second open to play.
    public static func open(device: String, bufferTimeMicroseconds: UInt32 = defaultBufferTimeMicroseconds) -> Result<ALSAAudioSink, AudioSinkError> {
        calsa_silence_errors()
        var handle: OpaquePointer?
        let result = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK))
        guard result >= 0, let handle else {
            return .failure(AudioSinkError(sink: "alsa:\(device)", reason: "cannot open device: \(errorText(result))"))
        }
        let sink = ALSAAudioSink(device: device, bufferTimeMicroseconds: bufferTimeMicroseconds)
        sink.probed.withLock { $0 = Int(bitPattern: handle) }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(probeKeptNanoseconds))) { [weak sink] in
            sink?.closeProbed()
        }
        return .success(sink)
    }

    /// Whether the device the sink was opened with is still waiting for the first ``configure(_:)``.
    public var holdsProbedDevice: Bool { probed.withLock { $0 != 0 } }

    /// Closes the device ``open(device:bufferTimeMicroseconds:)`` left open, unless a configure took it.
    private func closeProbed() {
        let address = probed.withLock { address in
            defer { address = 0 }
            return address
        }
        if let handle = OpaquePointer(bitPattern: address) { snd_pcm_close(handle) }
    }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        if pcm != nil, self.format == format { return }
        close()
        // The device as the sink was opened with, the first time; opened here otherwise.
        var handle = OpaquePointer(bitPattern: probed.withLock { address in
            defer { address = 0 }
            return address
        })
        if handle == nil {
            try check(snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK)), "cannot open device")
        }
        guard let handle else { throw AudioSinkError(sink: name, reason: "cannot open device") }
        do {
            let periodSize = try setHardwareParameters(handle, format)
            try setSoftwareParameters(handle, periodSize: periodSize)
            stagingTarget = max(1, min(Int(periodSize), bufferFrames / 2))
            periodNanoseconds.store(UInt64(periodSize) * 1_000_000_000 / UInt64(format.sampleRate), ordering: .relaxed)
            try check(prepare(handle), "cannot prepare the stream")
            try preparePolling(handle)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        shared.withLock { $0 = Int(bitPattern: handle) }
        self.format = format
        staging = .allocate(byteCount: stagingTarget * format.bytesPerFrame, alignment: 16)
        stagedFrames = 0
        openCount.add(1, ordering: .relaxed)
    }

    /// Takes frames for the device. While the stream runs with at least half its buffer
    /// filled, frames are gathered (``staging``) a period at a time, and a full period goes to
    /// the device in one write, waiting for room first if there is none: the wait comes with
    /// the next period already decoded, so the thread that wakes for room writes at once. An
    /// interrupted wait (``interruptWrite()``) takes nothing.
    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        guard let pcm else { throw AudioSinkError(sink: name, reason: "write to a closed device") }
        guard frameCount > 0 else { return 0 }
        if stagedFrames > 0 {
            if stagedFrames + frameCount <= stagingTarget { return gather(samples, frameCount: frameCount) }
            // A period gathered: to the device at once.
            if try !writeStaged(pcm) { return 0 }
        }
        let room = snd_pcm_avail_update(pcm)
        guard snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING, room >= 0, bufferFrames - Int(room) >= bufferFrames / 2 else {
            // Starting, recovering (the device's write reports an error), or running low: each
            // chunk straight to the device.
            return try writeToDevice(pcm, samples, frameCount: frameCount)
        }
        return gather(samples, frameCount: frameCount)
    }

    /// Adds frames to ``staging`` (as many as fit) and returns how many.
    private func gather(_ samples: UnsafeRawBufferPointer, frameCount: Int) -> Int {
        guard let staging, let format else { return 0 }
        let taken = min(frameCount, stagingTarget - stagedFrames)
        let bytesPerFrame = format.bytesPerFrame
        (staging.baseAddress! + stagedFrames * bytesPerFrame)
            .copyMemory(from: samples.baseAddress!, byteCount: taken * bytesPerFrame)
        stagedFrames += taken
        return taken
    }

    /// Gives the gathered frames to the device, waiting for room as needed; returns false if
    /// a wait was interrupted (what was not written stays gathered).
    private func writeStaged(_ pcm: OpaquePointer) throws(AudioSinkError) -> Bool {
        guard stagedFrames > 0, let staging, let format else { return true }
        let bytesPerFrame = format.bytesPerFrame
        var offset = 0
        defer {
            let left = stagedFrames - offset
            if left > 0 && offset > 0 {
                staging.baseAddress!.copyMemory(from: staging.baseAddress! + offset * bytesPerFrame, byteCount: left * bytesPerFrame)
            }
            stagedFrames = left
        }
        while offset < stagedFrames {
            let rest = UnsafeRawBufferPointer(rebasing: staging[(offset * bytesPerFrame)..<(stagedFrames * bytesPerFrame)])
            let written = try writeToDevice(pcm, rest, frameCount: stagedFrames - offset)
            if written == 0 { return false }
            offset += written
        }
        return true
    }

    /// One `snd_pcm_writei` of what fits, waiting for room if there is none; recovers underruns.
    private func writeToDevice(_ pcm: OpaquePointer, _ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        // Set when a wait ended on the device's "room": if the write then finds none, the
        // descriptor misled it, and will again at once.
        var roomSignalled = false
        while true {
            let result = changingStream {
                let result = snd_pcm_writei(pcm, samples.baseAddress, snd_pcm_uframes_t(frameCount))
                // Released: a ``playedFrames()`` that sees this count sees ``streamChanges`` odd.
                if result > 0 { writtenCount.add(Int64(result), ordering: .releasing) }
                return result
            }
            if result > 0 {
                if framesSincePrepare == 0 { firstWriteAt = clock.now() }
                framesSincePrepare += Int(result)
                return Int(result)
            }
            let code = Int32(result)
            if result == 0 || code == -EAGAIN {
                // No room: wait for it, or for a command. If the device's descriptor said "room"
                // and there was none, it would say so again at once: sleep instead of polling it.
                switch try waitForRoom(pcm, trustingTheDescriptor: !roomSignalled) {
                case .stop: return 0
                case .retry: roomSignalled = false
                case .retryOnSignal: roomSignalled = true
                }
                continue
            }
            if code == -EPIPE { underrunCount.add(1, ordering: .relaxed) }
            let recovered = changingStream {
                let recovered = snd_pcm_recover(pcm, code, 1)
                streamPrepared()
                return recovered
            }
            if recovered < 0 {
                throw AudioSinkError(sink: name, reason: "write failed: \(Self.errorText(code))")
            }
        }
    }

    public func interruptWrite() {
        var one: UInt64 = 1
        _ = Glibc.write(interruption, &one, MemoryLayout<UInt64>.size)
    }

    /// The device's delay plus the frames gathered for it.
    public func delay() -> Int { measureDelay().delay }

    /// ``delay()``, with the device's count of what it has played once it has been heard.
    public func measureDelay() -> (delay: Int, played: PlayedFrames?) {
        guard let pcm else { return (0, nil) }
        var frames: snd_pcm_sframes_t = 0
        if snd_pcm_delay(pcm, &frames) < 0 { return (stagedFrames, nil) }
        noteHeard(deviceDelay: Int(frames))
        var played: PlayedFrames?
        if seenPlaying {
            played = PlayedFrames(stream: streamNumber.load(ordering: .relaxed),
                                  frames: writtenCount.load(ordering: .relaxed) - Int64(frames), measuredAt: clock.now())
            // Running only: paused (corked), the pulse plugin loses its timing until resumed and
            // asked again, and a call from another thread would wait for the server.
            if Self.otherThreadsMayAsk, !answersOtherThreads.load(ordering: .relaxed), snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING {
                answersOtherThreads.store(true, ordering: .releasing)
            }
        }
        return (max(0, Int(frames)) + stagedFrames, played)
    }

    /// Whether alsa-lib serializes calls on one PCM: unless `LIBASOUND_THREAD_SAFE=0` (which
    /// alsa-lib reads once, at the first open), ``playedFrames()`` answers from other threads.
    static let otherThreadsMayAsk: Bool = getenv("LIBASOUND_THREAD_SAFE").map { $0.pointee != UInt8(ascii: "0") } ?? true

    /// Any thread: the device's count of what it has played, from its delay now. Nil before
    /// the device has answered the render thread as playing (``answersOtherThreads``), and
    /// when the render thread wrote or restarted the stream meanwhile (``streamChanges``):
    /// the caller then goes by the render thread's last measurement.
    public func playedFrames() -> PlayedFrames? {
        shared.withLock { address -> PlayedFrames? in
            guard let handle = OpaquePointer(bitPattern: address), answersOtherThreads.load(ordering: .acquiring) else { return nil }
            let before = streamChanges.load(ordering: .sequentiallyConsistent)
            guard before & 1 == 0 else { return nil }
            let stream = streamNumber.load(ordering: .sequentiallyConsistent)
            var frames: snd_pcm_sframes_t = 0
            guard snd_pcm_delay(handle, &frames) == 0 else { return nil }
            let written = writtenCount.load(ordering: .sequentiallyConsistent)
            let at = clock.now()
            guard streamChanges.load(ordering: .sequentiallyConsistent) == before else { return nil }
            return PlayedFrames(stream: stream, frames: written - Int64(frames), measuredAt: at)
        }
    }

    /// The device's period: behind ALSA's pulse plugin with the default buffer, about 166 ms.
    public var positionPeriod: UInt64 { periodNanoseconds.load(ordering: .relaxed) }

    /// Pauses in place, keeping gathered frames for the writes after ``resume()``.
    public func pause() -> Bool {
        guard let pcm else { return true }
        let state = snd_pcm_state(pcm)
        if state != SND_PCM_STATE_RUNNING { return state != SND_PCM_STATE_XRUN || delay() == 0 }
        // Paused (or dropped), the pulse plugin may have no timing to answer with at once.
        answersOtherThreads.store(false, ordering: .releasing)
        if canPause, changingStream({ snd_pcm_pause(pcm, 1) }) == 0 { return true }
        discardStream(pcm)
        return false
    }

    public func resume() {
        guard let pcm else { return }
        if snd_pcm_state(pcm) == SND_PCM_STATE_PAUSED { changingStream { _ = snd_pcm_pause(pcm, 0) } }
    }

    public func flush() {
        guard let pcm else { return }
        discardStream(pcm)
    }

    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool {
        guard let pcm, let format else { return true }
        // What was gathered goes out first; a failure drops it, an interruption ends this step.
        do {
            if try !writeStaged(pcm) { return false }
        } catch {
            stagedFrames = 0
        }
        let state = snd_pcm_state(pcm)
        if state == SND_PCM_STATE_PREPARED, delay() > 0 { changingStream { _ = snd_pcm_start(pcm) } }
        if state != SND_PCM_STATE_RUNNING && state != SND_PCM_STATE_PREPARED { return true }
        let remaining = UInt64(delay()) * 1_000_000_000 / UInt64(format.sampleRate)
        if remaining <= timeoutNanoseconds {
            // Close to the end: let alsa-lib play the tail out exactly (a blocking drain: on a
            // non-blocking stream it would return at once), then make the stream writable again.
            changingStream {
                snd_pcm_nonblock(pcm, 0)
                snd_pcm_drain(pcm)
                snd_pcm_nonblock(pcm, 1)
                prepare(pcm)
            }
            return true
        }
        clock.sleep(nanoseconds: timeoutNanoseconds)
        return false
    }

    public func close() {
        shared.withLock { $0 = 0 }
        answersOtherThreads.store(false, ordering: .releasing)
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
        format = nil
        pollDescriptors.removeAll()
        staging?.deallocate()
        staging = nil
        stagedFrames = 0
    }

    // MARK: - Private

    /// Fills `pollDescriptors` with the device's descriptors and the interruption's.
    private func preparePolling(_ handle: OpaquePointer) throws(AudioSinkError) {
        let count = Int(snd_pcm_poll_descriptors_count(handle))
        guard count > 0 else { throw AudioSinkError(sink: name, reason: "the device has no poll descriptors") }
        var descriptors = [pollfd](repeating: pollfd(), count: count + 1)
        let filled = descriptors.withUnsafeMutableBufferPointer {
            snd_pcm_poll_descriptors(handle, $0.baseAddress, UInt32(count))
        }
        try check(filled, "cannot read the poll descriptors")
        descriptors[Int(filled)] = pollfd(fd: interruption, events: Int16(POLLIN), revents: 0)
        pollDescriptors = Array(descriptors[0...Int(filled)])
    }

    /// How a wait for room ended (``waitForRoom(_:trustingTheDescriptor:)``).
    private enum RoomWait {
        /// The write tries again.
        case retry
        /// The device's descriptor said "room": the write tries again, and if it finds none
        /// the next wait does not trust the descriptor.
        case retryOnSignal
        /// The write returns 0: interrupted, or not yet heard and the short wait ran out.
        case stop
    }

    /// Waits until the device has room (`avail_min` frames) or ``interruptWrite()`` was called.
    /// The stream is started first if it holds audio but is not running yet (nothing else
    /// would start it, and no room would ever come).
    ///
    /// Not `trustingTheDescriptor` (the last wait ended on the device's "room", and the write
    /// found none), it sleeps instead of polling the device: as long as it may, and no longer
    /// than `avail_min` frames take to play. A plugin's descriptor (the pulse plugin's) can say
    /// "room" while alsa-lib counts none; polled, the thread spun (docs/ALSA.md).
    private func waitForRoom(_ pcm: OpaquePointer, trustingTheDescriptor: Bool) throws(AudioSinkError) -> RoomWait {
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED { changingStream { _ = snd_pcm_start(pcm) } }
        let total = pollDescriptors.count
        let deviceCount = devicePollCount
        return try pollDescriptors.withUnsafeMutableBufferPointer { descriptors throws(AudioSinkError) -> RoomWait in
            let base = descriptors.baseAddress!
            if !trustingTheDescriptor {
                let roomMilliseconds = format.map { max(1, wakeThreshold * 1000 / $0.sampleRate) } ?? 1
                return sleepUntilRoom(pcm, interruption: base + deviceCount, atMost: roomMilliseconds) ? .retry : .stop
            }
            while true {
                for index in 0..<total { base[index].revents = 0 }
                // At most ``waitLimit(_:)``: a plugin's descriptor can miss its moment (ALSA's
                // pulse plugin, at the start of a stream), and the write must then go on (or,
                // before the device is heard, return so the position is measured again).
                let ready = poll(base, nfds_t(total), Int32(waitLimit(pcm)))
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw AudioSinkError(sink: name, reason: "poll failed: errno \(errno)")
                }
                if ready == 0 { return seenPlaying ? .retry : .stop }
                if base[deviceCount].revents != 0 { return takeInterruption() ? .retry : .stop }
                var events: UInt16 = 0
                try check(snd_pcm_poll_descriptors_revents(pcm, base, UInt32(deviceCount), &events), "poll failed")
                if events & UInt16(POLLERR) != 0 { return .retry }   // the write reports the error
                if events & UInt16(POLLOUT) != 0 { return .retryOnSignal }
                // The descriptor is ready but the device has no room by alsa-lib's count: polling
                // again would return at once. Sleep until the room should be there instead (or
                // a command comes), then let the write try.
                return sleepUntilRoom(pcm, interruption: base + deviceCount) ? .retry : .stop
            }
        }
    }

    /// How long a write may wait for the device's signal before it must look for itself, in
    /// milliseconds: until the buffer, playing at the device's rate, is down to a quarter (at
    /// least 1 ms, at most 1 s). Not the moment `avail_min` frames should be free: behind ALSA's
    /// pulse plugin the room grows in steps, and such a wait woke twice a period (docs/ALSA.md).
    private func longestSafeWait(_ pcm: OpaquePointer) -> Int {
        let available = snd_pcm_avail_update(pcm)
        guard available >= 0, let format else { return 1 }
        let playable = bufferFrames - Int(available) - bufferFrames / 4
        return min(1000, max(1, playable * 1000 / format.sampleRate))
    }

    /// How long a wait for room may last before the write looks again, in milliseconds: as
    /// long as is safe (``longestSafeWait(_:)``) once the device has been seen playing (a
    /// period of what was written since the stream was prepared has been heard), and at most
    /// ``startWaitMilliseconds`` before; such a short wait that runs out ends the write with
    /// 0 frames, so the render thread publishes the position again.
    ///
    /// Why: a stream behind ALSA's pulse plugin does not always start when started, and the
    /// player's time runs on from the last measurement as if the device played: measured
    /// every few milliseconds until the device has played a period, it cannot run far ahead
    /// (docs/ALSA.md, "Before the device is heard playing").
    private func waitLimit(_ pcm: OpaquePointer) -> Int {
        let safe = longestSafeWait(pcm)
        if !seenPlaying {
            var frames: snd_pcm_sframes_t = 0
            if snd_pcm_delay(pcm, &frames) == 0 { noteHeard(deviceDelay: Int(frames)) }
        }
        return seenPlaying ? safe : min(safe, Self.startWaitMilliseconds)
    }

    /// Marks the device seen playing once a period of what was written since it was
    /// prepared is no longer in its delay, and a period's time has passed since the first
    /// write: no device plays faster than its rate (the pulse plugin's delay can drop by a
    /// period before anything plays: docs/ALSA.md).
    private func noteHeard(deviceDelay: Int) {
        guard !seenPlaying, framesSincePrepare - deviceDelay >= stagingTarget, let format else { return }
        let periodNanoseconds = UInt64(stagingTarget) * 1_000_000_000 / UInt64(format.sampleRate)
        if clock.now() - firstWriteAt >= periodNanoseconds { seenPlaying = true }
    }

    /// The longest wait for room before the device has been seen playing (``waitLimit(_:)``).
    static let startWaitMilliseconds = 10

    /// Prepares the device for a new stream: nothing written to it yet, not seen playing.
    /// Every way the sink prepares the device goes through here (or ``streamPrepared()``, after
    /// `snd_pcm_recover`, which prepares by itself).
    @discardableResult
    private func prepare(_ pcm: OpaquePointer) -> Int32 {
        changingStream {
            let result = snd_pcm_prepare(pcm)
            streamPrepared()
            return result
        }
    }

    /// Drops what the device and the sink hold, and prepares a new stream.
    private func discardStream(_ pcm: OpaquePointer) {
        stagedFrames = 0
        changingStream {
            snd_pcm_drop(pcm)
            prepare(pcm)
        }
    }

    /// Resets what the sink knows of the stream's start (``waitLimit(_:)``), and numbers the
    /// new stream (``PlayedFrames/stream``).
    private func streamPrepared() {
        framesSincePrepare = 0
        firstWriteAt = 0
        seenPlaying = false
        answersOtherThreads.store(false, ordering: .releasing)
        streamNumber.add(1, ordering: .sequentiallyConsistent)
    }

    /// Runs `body`, a change of the frames written or of the stream, with ``streamChanges``
    /// odd, so a ``playedFrames()`` that overlapped it is discarded. Render thread; nests.
    private func changingStream<T>(_ body: () -> T) -> T {
        changeDepth += 1
        if changeDepth == 1 { streamChanges.add(1, ordering: .sequentiallyConsistent) }
        defer {
            changeDepth -= 1
            if changeDepth == 0 { streamChanges.add(1, ordering: .sequentiallyConsistent) }
        }
        return body()
    }

    /// Waits, interruptibly, as long as it may (``waitLimit(_:)``), and at most `atMost`
    /// milliseconds; returns false if interrupted, or if the device is not yet heard.
    private func sleepUntilRoom(_ pcm: OpaquePointer, interruption descriptor: UnsafeMutablePointer<pollfd>,
                                atMost: Int = .max) -> Bool {
        let milliseconds = min(waitLimit(pcm), atMost)
        descriptor.pointee.revents = 0
        guard poll(descriptor, 1, Int32(milliseconds)) > 0 else { return seenPlaying }
        return takeInterruption()
    }

    /// Resets the interruption's `eventfd` (it was readable); returns false, for "interrupted".
    private func takeInterruption() -> Bool {
        var count: UInt64 = 0
        _ = read(interruption, &count, MemoryLayout<UInt64>.size)
        return false
    }

    /// Applies the format, buffer and period; returns the period size the device chose.
    private func setHardwareParameters(_ handle: OpaquePointer, _ format: AudioFormat) throws(AudioSinkError) -> snd_pcm_uframes_t {
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        try check(snd_pcm_hw_params_any(handle, params), "no configuration available")
        try check(snd_pcm_hw_params_set_rate_resample(handle, params, 1), "cannot enable resampling")
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access not supported")
        try check(snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16), "16-bit samples not supported")
        try check(snd_pcm_hw_params_set_channels(handle, params, UInt32(format.channelCount)), "\(format.channelCount) channels not supported")
        try check(snd_pcm_hw_params_set_rate(handle, params, UInt32(format.sampleRate), 0), "\(format.sampleRate) Hz not supported")
        var bufferTime = bufferTimeMicroseconds
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_buffer_time_near(handle, params, &bufferTime, &direction), "cannot set the buffer time")
        var periodTime = bufferTimeMicroseconds / Self.periodsPerBuffer
        direction = 0
        try check(snd_pcm_hw_params_set_period_time_near(handle, params, &periodTime, &direction), "cannot set the period time")
        try check(snd_pcm_hw_params(handle, params), "cannot apply the hardware parameters")
        canPause = snd_pcm_hw_params_can_pause(params) == 1
        var periodSize: snd_pcm_uframes_t = 0
        direction = 0
        try check(snd_pcm_hw_params_get_period_size(params, &periodSize, &direction), "cannot read the period size")
        var bufferSize: snd_pcm_uframes_t = 0
        try check(snd_pcm_hw_params_get_buffer_size(params, &bufferSize), "cannot read the buffer size")
        bufferFrames = Int(bufferSize)
        return periodSize
    }

    private func setSoftwareParameters(_ handle: OpaquePointer, periodSize: snd_pcm_uframes_t) throws(AudioSinkError) {
        var params: OpaquePointer?
        snd_pcm_sw_params_malloc(&params)
        defer { snd_pcm_sw_params_free(params) }
        try check(snd_pcm_sw_params_current(handle, params), "cannot read the software parameters")
        // Start as soon as data arrives: the render thread fills the buffer faster than it plays.
        try check(snd_pcm_sw_params_set_start_threshold(handle, params, 1), "cannot set the start threshold")
        // Wake a waiting write when a period is free, or a little less: a plugin that signals
        // its descriptor at a full period by its own count (ALSA's pulse plugin, when the server
        // has room for a period) must find alsa-lib's check (avail ≥ avail_min) true then too,
        // or the descriptor stays ready while the device says "not yet" (a busy loop).
        let threshold = max(1, periodSize - periodSize / 4)
        try check(snd_pcm_sw_params_set_avail_min(handle, params, threshold), "cannot set the wake-up threshold")
        wakeThreshold = Int(threshold)
        try check(snd_pcm_sw_params(handle, params), "cannot apply the software parameters")
    }

    private func check(_ result: Int32, _ what: String) throws(AudioSinkError) {
        if result < 0 { throw AudioSinkError(sink: name, reason: "\(what): \(Self.errorText(result))") }
    }

    static func errorText(_ code: Int32) -> String { String(cString: snd_strerror(code)) }
}

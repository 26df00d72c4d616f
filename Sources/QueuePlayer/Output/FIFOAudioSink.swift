import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An output to a named pipe: raw interleaved signed 16-bit PCM (little-endian, the native
/// order of every Linux machine the daemon builds for) in one fixed format, for a reader
/// such as snapserver. MPD's fifo output is the model.
///
/// A pipe has no clock, so the sink paces the stream against the player's (a
/// ``NullAudioSink`` whose buffer is ``bufferedChunks`` chunks, woken every chunk); audio goes
/// into the pipe as that pace takes it, with non-blocking writes: a full pipe (a reader slower than real time) drops
/// what does not fit, and the render thread never waits for the pipe.
///
/// The write end is opened without blocking through a read end of the sink's own, held only
/// for the instant of the open (a FIFO's write end opens, `O_NONBLOCK`, only while a reader
/// has it open, else `ENXIO`; snapserver, while nothing writes, holds its read end only for
/// an instant every 100 ms, so waiting for `ENXIO` to end would rarely meet it), and is kept.
/// With no reader, writes fail with `EPIPE` (SIGPIPE is ignored): playback time still
/// advances and the audio is dropped, as MPD's fifo output does. A reader that opens finds a
/// writer and gets audio from the next write on, within one tick (a write: a chunk, about
/// 23 ms at 44.1 kHz); one that leaves is the same as none. Unlike MPD,
/// the sink does not keep a read end: a pipe nobody reads holds no stale audio for the next
/// reader, and costs nothing.
///
/// Owner: the render thread holds the pipe's descriptor and ``carry`` (every method but
/// the counters, which are atomics, and the waits' pair, which are the pacer's).
public final class FIFOAudioSink: AudioSink, @unchecked Sendable {
    /// Where the pipe is.
    public let path: String
    /// The only format the sink takes: the player's decoder must produce it
    /// (``MPG123DecoderFactory/outputFormat``).
    public let format: AudioFormat
    public var name: String { "fifo:\(path)" }
    public var clock: any PlaybackClock { pacer.clock }

    /// Frames a reader was given (written into the pipe).
    public var framesDelivered: Int64 { delivered.load(ordering: .relaxed) }
    /// Frames dropped: no reader, or a full pipe.
    public var framesDropped: Int64 { dropped.load(ordering: .relaxed) }

    private let pacer: NullAudioSink
    private let cPath: UnsafeMutablePointer<CChar>
    private let delivered = Atomic<Int64>(0)
    private let dropped = Atomic<Int64>(0)
    // Render thread only:
    private var descriptor: Int32 = -1
    /// The last write found a reader (it wrote, or the pipe was full): what the pipe holds is
    /// what that reader has not read yet.
    private var readerTakes = false
    /// Paused by the player: what the pipe holds still goes to its reader, so none of it is pending.
    private var paused = false
    /// The bytes of a frame the pipe took only part of, to go first into the pipe next time,
    /// so the reader's stream stays frame-aligned (a pipe takes writes of up to PIPE_BUF,
    /// 4,096 bytes, whole; a chunk is at most that, so this is a safeguard).
    private var carry: (UInt64, UInt64) = (0, 0)
    private var carryCount = 0
    /// When a write last found no reader and the path was checked (the player's clock):
    /// once a second the path is checked to still name the pipe held open.
    private var lastPathCheck: UInt64 = 0

    /// How far, in render chunks of 1,024 frames, the pipe is fed ahead of the clock: the
    /// render thread may be held up that long (about 190 ms at 44.1 kHz: a loaded machine, a
    /// page fault) before the reader finds the pipe empty (snapserver then plays silence).
    /// The position does not count it: a reader such as snapserver takes what is written at
    /// once, so what it was given is the stream's audible end (``delay()``).
    static let bufferedChunks = 8

    /// A sink writing `format` to the pipe at `path` (created at its first write if missing).
    public init(path: String, format: AudioFormat, clock: any PlaybackClock = RealTimeClock.shared) {
        self.path = path
        self.format = format
        cPath = strdup(path)
        pacer = NullAudioSink(clock: clock, bufferDuration: Double(Self.bufferedChunks * 1024) / Double(format.sampleRate),
                              wakeFrames: 1024)
        Self.ignoreBrokenPipes
    }

    deinit {
        closePipe()
        free(cPath)
    }

    /// A write to a pipe whose reader has left raises SIGPIPE, which ends the process; ignored
    /// once for the process, the write fails with `EPIPE` instead (swift-nio's sockets do not
    /// rely on it either way).
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Makes sure a FIFO is at `path`: creates it (mode 0666 less the umask) if nothing is
    /// there; fails if something else is, or if it cannot be created. Called at start, so a
    /// wrong path is an error at once.
    public static func prepare(path: String) throws(AudioSinkError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFIFO else {
                throw AudioSinkError(sink: "fifo:\(path)", reason: "exists and is not a FIFO")
            }
            return
        }
        let reason = errno
        guard reason == ENOENT else { throw AudioSinkError(sink: "fifo:\(path)", reason: String(cString: strerror(reason))) }
        guard mkfifo(path, 0o666) == 0 || errno == EEXIST else {
            throw AudioSinkError(sink: "fifo:\(path)", reason: "cannot create the FIFO: \(String(cString: strerror(errno)))")
        }
    }

    public func configure(_ format: AudioFormat) throws(AudioSinkError) {
        guard format == self.format else {
            throw AudioSinkError(sink: name, reason: "takes \(self.format) only, not \(format)")
        }
        // No `prepare` here: a FIFO that is missing (or cannot be opened) is a pipe with no
        // reader, created or opened again at every write; time goes on meanwhile.
        try pacer.configure(format)
    }

    public func write(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        let accepted = try pacer.write(samples, frameCount: frameCount)
        if accepted > 0 { deliver(samples, frames: accepted) }
        return accepted
    }

    public func writeWithoutWaiting(_ samples: UnsafeRawBufferPointer, frameCount: Int) throws(AudioSinkError) -> Int {
        let accepted = try pacer.writeWithoutWaiting(samples, frameCount: frameCount)
        deliver(samples, frames: accepted)
        return accepted
    }

    /// The frames count as in the pipe already: the reader gets the stream's next ones.
    public func joinStream(aheadBy frames: Int) { pacer.joinStream(aheadBy: frames) }
    public func interruptWrite() { pacer.interruptWrite() }
    /// What the reader has not read yet: the pipe's unread bytes (`FIONREAD`). With no reader
    /// the audio is dropped as it is written, so nothing is pending: the position is then
    /// what was handed over, as it is with a reader that keeps up, and it stays continuous
    /// when a reader comes or goes. The pace's account, eight chunks ahead of the clock, is
    /// ``framesAheadOfClock()``: counted as delay, it would put the position that far behind
    /// what the reader was given, and a pause resumed there would give it that audio again.
    /// Paused, nothing is pending: a pipe cannot take back what it holds, so its reader plays
    /// all of it, and the song resumes after it.
    public func delay() -> Int {
        guard !paused, descriptor >= 0, readerTakes else { return 0 }
        var unread: Int32 = 0
        guard ioctl(descriptor, UInt(FIONREAD), &unread) == 0, unread > 0 else { return 0 }
        return Int(unread) / format.bytesPerFrame
    }
    public func framesAheadOfClock() -> Int { pacer.delay() }
    public func pause() -> Bool {
        paused = pacer.pause()
        return paused
    }
    public func resume() {
        paused = false
        pacer.resume()
    }
    /// What is in the pipe already is the reader's; only the pace's account is dropped.
    public func flush() { pacer.flush() }
    /// The pipe's reader takes what is written at once (snapserver does): a flush takes nothing back.
    public var flushTakesBackWrittenAudio: Bool { false }
    public func waitUntilDrained(timeoutNanoseconds: UInt64) -> Bool { pacer.waitUntilDrained(timeoutNanoseconds: timeoutNanoseconds) }

    public func close() {
        pacer.close()
        closePipe()
    }

    /// The pace is the sink's clock: its waits are the pacer's.
    public var isWaitingForTime: Bool { pacer.isWaitingForTime }
    /// Ends the pacer's waits only: the pipe belongs to the render thread, which closes it.
    public func stopWaitingForTime() { pacer.stopWaitingForTime() }

    // MARK: - The pipe (render thread)

    /// Puts the first `frames` frames of `samples` into the pipe, or drops them.
    private func deliver(_ samples: UnsafeRawBufferPointer, frames: Int) {
        if descriptor < 0 { openPipe() }
        guard descriptor >= 0, writeCarry() else {
            dropped.wrappingAdd(Int64(frames), ordering: .relaxed)
            return
        }
        let bytesPerFrame = format.bytesPerFrame
        let count = frames * bytesPerFrame
        let written = Glibc.write(descriptor, samples.baseAddress!, count)
        guard written >= 0 else {
            // EAGAIN: the pipe is full. EPIPE: no reader; the pipe stays open for the next one.
            let reason = errno
            readerTakes = reason == EAGAIN
            if reason == EPIPE {
                carryCount = 0
                checkPathStillNamesPipe()
            } else if reason != EAGAIN && reason != EINTR {
                closePipe()
            }
            dropped.wrappingAdd(Int64(frames), ordering: .relaxed)
            return
        }
        readerTakes = true
        let whole = written / bytesPerFrame
        let part = written % bytesPerFrame
        if part > 0 {
            withUnsafeMutableBytes(of: &carry) { carry in
                carry.copyMemory(from: UnsafeRawBufferPointer(rebasing: samples[written..<(written - part + bytesPerFrame)]))
            }
            carryCount = bytesPerFrame - part
        }
        delivered.wrappingAdd(Int64(whole + (part > 0 ? 1 : 0)), ordering: .relaxed)
        dropped.wrappingAdd(Int64(frames - whole - (part > 0 ? 1 : 0)), ordering: .relaxed)
    }

    /// Completes a frame the pipe took part of; false if the pipe cannot take it now.
    private func writeCarry() -> Bool {
        guard carryCount > 0 else { return true }
        let written = withUnsafeBytes(of: &carry) { Glibc.write(descriptor, $0.baseAddress!, carryCount) }
        if written < 0 {
            if errno == EPIPE {
                carryCount = 0
                return true
            }
            if errno != EAGAIN && errno != EINTR { closePipe() }
            return false
        }
        if written < carryCount {
            withUnsafeMutableBytes(of: &carry) { carry in
                carry.baseAddress!.copyMemory(from: carry.baseAddress! + written, byteCount: carryCount - written)
            }
        }
        carryCount -= written
        return carryCount == 0
    }

    /// Opens the pipe's write end (creating the FIFO if it went missing), through a read end
    /// held for the instant of the open.
    private func openPipe() {
        var reader = open(cPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if reader < 0 && errno == ENOENT {
            _ = mkfifo(cPath, 0o666)
            reader = open(cPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        }
        guard reader >= 0 else { return }
        defer { Glibc.close(reader) }
        var info = stat()
        guard fstat(reader, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            // Something replaced the FIFO with a file: never fill a disk with audio.
            return
        }
        let fd = open(cPath, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        descriptor = fd
        lastPathCheck = clock.now()
    }

    /// With no reader for a second: if the path no longer names the pipe held open (the FIFO
    /// was removed or replaced), lets it go, so the next write opens what is there now.
    private func checkPathStillNamesPipe() {
        let now = clock.now()
        guard now >= lastPathCheck + 1_000_000_000 else { return }
        lastPathCheck = now
        var held = stat()
        var named = stat()
        if fstat(descriptor, &held) != 0 || stat(cPath, &named) != 0 || held.st_ino != named.st_ino || held.st_dev != named.st_dev {
            closePipe()
        }
    }

    private func closePipe() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
        readerTakes = false
        // A new reader starts on a frame boundary.
        carryCount = 0
    }
}

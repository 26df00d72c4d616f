import Dispatch
import Synchronization

/// What the player asks of its render thread.
enum RenderCommand: Sendable {
    /// Drop everything buffered and start a new generation with `item` (nil: stop),
    /// followed gaplessly by `next`.
    case load(generation: UInt64, item: RenderItem?, next: RenderItem?, playing: Bool)
    /// Replace the item that follows the current one.
    case setNext(RenderItem?)
    /// Start or resume consuming.
    case play
    /// Stop consuming, in place if the device can.
    case pause
    /// While paused, close the device so other programs can use it (reopened on play).
    case releaseOutput
    /// Make the stretcher and skip silence for the output's format now, ahead of their use.
    case preparePace
    /// End the render thread.
    case shutdown

    /// True for the commands a later load replaces: what to play, and what follows it.
    var isSupersededByLoad: Bool {
        switch self {
        case .load, .setNext: return true
        case .play, .pause, .releaseOutput, .preparePace, .shutdown: return false
        }
    }
}

/// Commands from the player's control queue to the render thread.
///
/// The render thread's per-buffer check is one atomic load; the short
/// critical section is only entered when a command is waiting, and the lock is
/// shared with the control queue alone, never with observer callbacks.
final class RenderMailbox: Sendable {
    private let commands = Mutex<[RenderCommand]>([])
    private let pendingCount = Atomic<Int>(0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let sink: any AudioSink

    init(sink: any AudioSink) {
        self.sink = sink
    }

    /// Posts a command and wakes the render thread, whether it waits for
    /// commands or for buffer space.
    ///
    /// A load makes every load and next item still waiting stale (they belong to an older
    /// generation, which the player no longer listens to): they are dropped here, so their
    /// decoders are released now, not after a render thread that is behind (a blocked write,
    /// a busy machine) gets to them. Quick `next` commands then hold one load's files at most.
    func post(_ command: RenderCommand) {
        let superseded = commands.withLock { commands -> [RenderCommand] in
            var stale: [RenderCommand] = []
            if case .load = command, commands.contains(where: \.isSupersededByLoad) {
                stale = commands.filter(\.isSupersededByLoad)
                commands.removeAll(where: \.isSupersededByLoad)
            }
            commands.append(command)
            pendingCount.add(1 - stale.count, ordering: .releasing)
            return stale
        }
        wakeUp.signal()
        sink.interruptWrite()
        // Released here, outside the lock the render thread takes: closing files takes time.
        _ = superseded
    }

    /// Wakes the render thread when it waits for a network item's data (a transport's thread:
    /// the stream's buffer calls this only when the render thread said it waits).
    func wakeForData() {
        dataWake.store(true, ordering: .releasing)
        wakeUp.signal()
    }

    /// Set by ``wakeForData()`` until the render thread takes it: it is not at rest meanwhile.
    private let dataWake = Atomic<Bool>(false)

    /// True if data arrived that the render thread has not looked at.
    var hasDataWake: Bool { dataWake.load(ordering: .acquiring) }

    /// The render thread looks at its stream's data now.
    func takeDataWake() {
        dataWake.store(false, ordering: .releasing)
    }

    /// True if commands wait (the render thread's cheap check).
    var hasPending: Bool { pendingCount.load(ordering: .acquiring) > 0 }

    /// Takes every waiting command, oldest first.
    func take() -> [RenderCommand] {
        let taken = commands.withLock { commands -> [RenderCommand] in
            let all = commands
            commands.removeAll(keepingCapacity: true)
            return all
        }
        pendingCount.subtract(taken.count, ordering: .releasing)
        return taken
    }

    /// Blocks until a command is posted (returns at once if one is waiting).
    func waitForCommand() {
        if hasPending { return }
        wakeUp.wait()
    }

    /// Blocks until a command is posted or `timeoutNanoseconds` have passed.
    func waitForCommand(timeoutNanoseconds: UInt64) {
        if hasPending { return }
        _ = wakeUp.wait(timeout: .now() + .nanoseconds(Int(min(timeoutNanoseconds, UInt64(Int.max)))))
    }
}

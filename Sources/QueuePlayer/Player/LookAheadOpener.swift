import Dispatch
import Synchronization

/// Opens the item that is to follow the render thread's latest one gaplessly (the look-ahead),
/// on a serial queue of its own rather than the player's control queue.
///
/// Why: opening an MP3 scans it whole for its exact length (libmpg123's `mpg123_scan`, once per
/// file version: tens of milliseconds for a song, hundreds for an hour-long podcast episode).
/// On the control queue that scan would hold up every time observer's
/// tick (the clock thread enters that queue for each one) whenever the next item is opened, at
/// every item boundary, and a load would wait for it before the render thread got the item to play.
///
/// One item is opened at a time. The result waits here until the player takes it on its
/// control queue (``result(for:whenOpened:)``, ``take(_:)``), in the call that `whenOpened`
/// makes there; one the player did not take then (it no longer wants that item next) is dropped,
/// with its open file. State: `state` (a mutex, held only to read or swap it); `pending` counts
/// the opens whose `whenOpened` has not yet returned, for a clock that moves only when told
/// (``isIdle``).
final class LookAheadOpener: Sendable {
    private struct State {
        var inFlight: PlayerItem?
        var ready: (item: PlayerItem, result: Result<any Decoder, DecoderError>)?
    }

    private let state = Mutex(State())
    private let pending = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "queueplayer.lookahead", qos: .userInitiated)
    private let controlQueue: DispatchQueue
    private let factory: any DecoderFactory

    init(factory: any DecoderFactory, controlQueue: DispatchQueue) {
        self.factory = factory
        self.controlQueue = controlQueue
    }

    /// No open under way or waiting to be handed back.
    var isIdle: Bool { pending.load(ordering: .acquiring) == 0 }

    /// The player's control queue: what opening `item` gave, if that is done; otherwise nil,
    /// having started opening it (unless another open is under way). `whenOpened` is called on
    /// the control queue once a result is here, to ask again.
    func result(for item: PlayerItem, whenOpened: @escaping @Sendable () -> Void) -> Result<any Decoder, DecoderError>? {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        let (found, starts) = state.withLock { state -> (Result<any Decoder, DecoderError>?, Bool) in
            if let ready = state.ready, ready.item == item {
                state.ready = nil
                return (ready.result, false)
            }
            if state.inFlight != nil { return (nil, false) }
            state.ready = nil
            state.inFlight = item
            return (nil, true)
        }
        guard starts else { return found }
        pending.add(1, ordering: .relaxed)
        queue.async { [self] in
            let result = Result { () throws(DecoderError) -> any Decoder in try item.openDecoder(with: factory) }
            state.withLock { state in
                state.inFlight = nil
                state.ready = (item, result)
            }
            controlQueue.async { [self] in
                whenOpened()
                // Not taken: not wanted next now (another open may have landed meanwhile).
                let unwanted = state.withLock { state -> Result<any Decoder, DecoderError>? in
                    guard let ready = state.ready, ready.item == item else { return nil }
                    state.ready = nil
                    return ready.result
                }
                _ = unwanted  // released here, outside the lock: closing a file takes time
                pending.subtract(1, ordering: .releasing)
            }
        }
        return nil
    }

    /// The player's control queue: the result of opening `item` ahead, waited for if it is
    /// being opened; nil if it was not asked for (the caller opens it itself).
    func take(_ item: PlayerItem) -> Result<any Decoder, DecoderError>? {
        dispatchPrecondition(condition: .onQueue(controlQueue))
        if state.withLock({ $0.inFlight == item }) { queue.sync {} }
        return state.withLock { state in
            guard let ready = state.ready, ready.item == item else { return nil }
            state.ready = nil
            return ready.result
        }
    }

    /// Waits for the open under way, if any (a test clock's settling).
    func settle() {
        queue.sync {}
    }
}

/// What a player's tick shares between its control queue and the clock thread, under one
/// mutex (``PlayerTick/share``).
///
/// While an item plays, nearly every tick only works out the audible time and calls the
/// periodic observers: the clock thread does that on its own, without entering the control
/// queue (``PlayerTick/alone(_:)``), from the span the control queue published when it
/// last set the wake-up timer. Everything else (an item's end heard, a time that left the
/// span, a new measurement of another generation, render events not yet handled) goes to the
/// control queue as before. The control queue takes the span back at the start of any work it
/// does, and when a call from within that work returns (``span`` nil: the next tick goes to
/// it), so the clock thread never ticks from a span the control queue is changing, and sets it
/// again, with the timer, when it schedules the next wake-up; it cancels the timer under the
/// mutex too.
///
/// A value: the mutex is its owner (the control queue and the clock thread take it, each
/// only for a tick's work or a change of the observers, the timer or the span).
struct TickShare {
    /// The periodic and boundary time observers and what is due: both sides deliver.
    var timeObservers = TimeObserverSchedule()
    /// The player's one timer (its wake-up), made once and set again for each: with
    /// ``RealTimeClock`` setting it allocates nothing, so a tick does not. Nil only until the
    /// end of the player's `init` (its work needs the player).
    var timer: (any ReusableTimer)?
    /// The item heard and where it lies in the stream, when the control queue last set the
    /// timer: while set, the clock thread may tick alone. Nil: the next tick goes to the
    /// control queue.
    var span: AudibleSpan?
    /// The clock thread reported a time alone since the control queue last took it in (its
    /// timeline's time never goes below it either: ``Timeline/noteReported(_:of:generation:)``).
    /// The time itself is ``QueuePlayer``'s `audibleFloor`, which `status` reads too.
    var reportedAlone = false
    /// The measurement the last tick alone worked its wake-up out from (``Hearing``: a device
    /// measured again at the same frame stands still).
    var lastMeasurement: (generation: UInt64, audible: Int64, at: UInt64)?
}

import Dispatch
import MPDProtocol
import QueuePlayer
import Synchronization
import Foundation

/// The last `status` and `currentsong` replies the partition rendered, kept so that the
/// control socket's event loop can answer these two — the commands clients poll, and the ones
/// a client hammering the daemon sends — without a hop to the partition's queue.
///
/// Why: a hop costs two thread wake-ups, and rendering a reply costs a few dozen `String`
/// appends; mpd answers a `status` in a few hundred nanoseconds. The event loop reads a
/// snapshot instead, under a lock held for a copy of two references, so it never waits for
/// the partition's work.
///
/// A reply is kept only while it cannot change by itself but for the elapsed time: stopped, or
/// playing, in the foreground. Playing, the `status` is kept without its `time` and `elapsed`
/// lines, which the event loop fills in with the audible time the player works out on the
/// calling thread (``QueuePlayer/audibleTimeWhilePlaying(of:)``: where the item lies in the
/// stream and the render thread's latest measurement, no trip to the player's queue); when
/// the player cannot say (the item has just ended, the stream restarted) the partition is
/// asked. Paused, the render thread reports where the device stopped a moment after the pause;
/// in the background `backgroundtimeremaining` counts down. It is used
/// only while all of these hold, so a client never reads a state older than a change it
/// could have learnt of:
/// * nothing was invalidated since it was rendered: every change reported to clients
///   (``ControlEvents/post(_:)``, at the moment of the change, not when the idle replies go
///   out), every command the partition runs, a new `error`, an application state change,
///   a download that starts or ends;
/// * the player's current item, time control status and waiting reason are what they were
///   then (they change on the player's threads);
/// * it is younger than ``maximumAge``, a bound on anything missed.
///
/// Thread-safe: the state is owned by its `Mutex`. Replies are stored on the partition's
/// queue and read on the event loop.
package final class StatusSnapshot: Sendable {
    /// What the replies were rendered against, besides the partition's own state (items
    /// compare by identity: ``PlayerItem``'s `==`).
    package struct Conditions: Equatable, Sendable {
        var item: PlayerItem?
        var timeControlStatus: QueuePlayer.TimeControlStatus
        var waitingReason: QueuePlayer.WaitingReason?
    }

    /// Which reply.
    package enum Kind: Sendable { case status, currentSong }

    /// The longest a kept reply is used, in nanoseconds.
    let maximumAge: UInt64

    /// A kept reply body, and when it was rendered (`DispatchTime` nanoseconds).
    private struct Body {
        var text: String
        var renderedAt: UInt64
        /// A `status` kept while playing: `text` is what comes before its `time` line, and the
        /// time is filled in when it is answered.
        var playing: Playing?
    }

    /// What a `status` kept while playing needs to be completed: its lines after `elapsed`,
    /// the item whose time goes in, and that item's duration.
    private struct Playing {
        var suffix: String
        var item: PlayerItem
        var duration: Double
    }

    private struct Kept {
        var conditions: Conditions
        var status: Body?
        var currentSong: Body?
    }

    private struct State {
        /// Bumped by every ``invalidate()``: a reply rendered before a bump is not stored.
        var epoch: UInt64 = 0
        var kept: Kept?
    }

    private let state = Mutex(State())

    /// - Parameter maximumAge: the longest a kept reply is used, in nanoseconds (1 s).
    init(maximumAge: UInt64 = 1_000_000_000) {
        self.maximumAge = maximumAge
    }

    /// Forgets the kept replies: something they show may have changed. Any thread.
    package func invalidate() {
        state.withLock {
            $0.epoch &+= 1
            $0.kept = nil
        }
    }

    /// The current epoch: read it before rendering a reply to ``store(_:_:conditions:epoch:)``.
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Keeps a reply rendered against `conditions` (its body with every tag type, without `OK`),
    /// unless something was invalidated since `epoch` was read.
    func store(_ kind: Kind, _ body: String, conditions: Conditions, epoch: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            guard state.epoch == epoch else { return }
            if state.kept == nil || state.kept!.conditions != conditions {
                state.kept = Kept(conditions: conditions)
            }
            switch kind {
            case .status: state.kept!.status = Body(text: body, renderedAt: now, playing: nil)
            case .currentSong: state.kept!.currentSong = Body(text: body, renderedAt: now, playing: nil)
            }
        }
    }

    /// Keeps a `status` rendered while `item` plays (its body with every tag type, without
    /// `OK`), to be answered with the time at that moment; not kept unless it has a `time`
    /// line followed by an `elapsed` line, or if something was invalidated since `epoch`.
    func storePlaying(status body: String, item: PlayerItem, duration: Double, conditions: Conditions, epoch: UInt64) {
        guard let time = body.range(of: "time: ").flatMap({ $0.lowerBound == body.startIndex || body[body.index(before: $0.lowerBound)] == "\n" ? $0 : nil }),
              let elapsed = body.range(of: "\nelapsed: ", range: time.upperBound..<body.endIndex),
              let end = body[elapsed.upperBound...].firstIndex(of: "\n") else { return }
        let playing = Playing(suffix: String(body[body.index(after: end)...]), item: item, duration: duration)
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            guard state.epoch == epoch else { return }
            if state.kept == nil || state.kept!.conditions != conditions {
                state.kept = Kept(conditions: conditions)
            }
            state.kept!.status = Body(text: String(body[..<time.lowerBound]), renderedAt: now, playing: playing)
        }
    }

    /// The kept reply to `command` (`status`, or `currentsong` for a client with every tag
    /// type enabled), if it still holds under the player's `conditions` (read just now); nil:
    /// ask the partition. A `status` kept while playing gets the audible time of its item
    /// from `elapsed` (seconds; nil: ask the partition). For ``ClientSession/step(answering:)``
    /// on the event loop.
    package func answer(_ command: Command, context: CommandContext, conditions: () -> Conditions,
                elapsed: (PlayerItem) -> Double? = { _ in nil }) -> String? {
        switch command {
        case .status:
            reply(.status, conditions: conditions(), elapsed: elapsed)
        case .currentsong where context.tagTypes.count == TagType.allCases.count:
            reply(.currentSong, conditions: conditions())
        default:
            nil
        }
    }

    /// The kept reply of `kind` if it is still what the partition would say under
    /// `conditions` (read just now); nil: ask the partition.
    func reply(_ kind: Kind, conditions: @autoclosure () -> Conditions,
               elapsed: (PlayerItem) -> Double? = { _ in nil }) -> String? {
        let kept = state.withLock { $0.kept }
        guard let kept else { return nil }
        let body = switch kind {
        case .status: kept.status
        case .currentSong: kept.currentSong
        }
        guard let body, DispatchTime.now().uptimeNanoseconds &- body.renderedAt < maximumAge,
              kept.conditions == conditions() else { return nil }
        guard let playing = body.playing else { return body.text }
        guard let seconds = elapsed(playing.item) else { return nil }
        // As ``StatusReport`` writes them.
        var text = body.text
        text += "time: \(ProtocolFormatting.wholeSeconds(seconds)):\(ProtocolFormatting.wholeSeconds(playing.duration))\n"
        text += "elapsed: \(ProtocolFormatting.seconds(seconds))\n"
        text += playing.suffix
        return text
    }
}

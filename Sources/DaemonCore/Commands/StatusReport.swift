import MPDProtocol
import QueuePlayer
import Foundation

/// The `status` reply, in mpd 0.23's order of lines.
struct StatusReport {
    /// What `status` reports besides the partition's state.
    struct Sources {
        /// The `update` running (`updating_db`).
        let updater: LibraryUpdater
        /// The downloads running (`transfers`).
        let transfers: TransferCount
        /// The daemon's life cycle (its own fields).
        let application: any ApplicationContext
    }

    let playback: any PlaybackControl
    let sources: Sources

    func reply() -> Reply {
        let playback = playback
        let player = playback.player
        // First: reading the time brings the player's timeline up to date, so an item that
        // has just ended is not reported as current with its time reset; then the partition
        // catches up with it, and only then is the queue read.
        let elapsed = player.currentTime().seconds
        playback.syncWithPlayer()
        let queue = playback.playQueue
        var reply = Reply()
        reply.append("volume", playback.volume)
        reply.append("repeat", queue.repeats ? 1 : 0)
        reply.append("random", queue.random ? 1 : 0)
        reply.append("single", queue.single.rawValue)
        reply.append("consume", queue.consume.rawValue)
        reply.append("partition", "default")
        reply.append("playlist", Int(queue.version))
        reply.append("playlistlength", queue.count)
        let decibels = playback.mixrampdb
        reply.append("mixrampdb", decibels == decibels.rounded() ? String(Int(decibels)) : String(decibels))
        let state = playback.playState
        reply.append("state", state.rawValue)
        let position = playback.selectedPosition
        if let position {
            reply.append("song", position)
            reply.append("songid", queue.entries[position].id)
        }
        if state != .stop, let item = player.currentItem {
            let duration = item.duration?.seconds ?? 0
            reply.append("time", "\(ProtocolFormatting.wholeSeconds(elapsed)):\(ProtocolFormatting.wholeSeconds(duration))")
            reply.append("elapsed", seconds: elapsed)
            reply.append("bitrate", item.bitRate ?? 0)
            // A live stream has no length: no `duration`, as in mpd.
            if item.duration != nil || !StreamURL.isNetwork(item.url) { reply.append("duration", seconds: duration) }
            if let format = item.format { reply.append("audio", "\(format.sampleRate):16:\(format.channelCount)") }
        }
        // A stream's health: audio buffered ahead, and why the player waits, while it
        // does (the state stays `play`, as in mpd).
        if state != .stop, let item = player.currentItem, StreamURL.isNetwork(item.url) {
            reply.append("buffer", String(format: "%.1f", item.bufferedDuration))
            switch player.reasonForWaitingToPlay {
            case .toMinimizeStalls: reply.append("waiting", "minimize-stalls")
            case .evaluatingBufferingRate: reply.append("waiting", "evaluating-buffering-rate")
            default: break
            }
        }
        if let next = queue.nextPosition {
            reply.append("nextsong", next)
            reply.append("nextsongid", queue.entries[next].id)
        }
        if let job = sources.updater.runningJob { reply.append("updating_db", job) }
        // Podcast episodes downloading, only while any is.
        let transfers = sources.transfers.value
        if transfers > 0 { reply.append("transfers", transfers) }
        // As mpd reports an output it cannot open: in `error`, while the state stays `play`.
        if player.reasonForWaitingToPlay == .outputUnavailable {
            reply.append("error", "audio output unavailable; retrying")
        } else if let error = playback.lastError {
            reply.append("error", error)
        }
        for (key, value) in sources.application.statusFields { reply.append(key, value) }
        appendPace(to: &reply, item: state != .stop ? player.currentItem : nil)
        // The sleep timer, while one is set: seconds left, or `end`, `chapter`.
        if let sleep = playback.sleepTimer.statusValue { reply.append("sleep", sleep) }
        // The chapter heard (from 1), while one is (not mpd's).
        if state != .stop, let item = player.currentItem, let chapter = item.chapterIndex(at: MediaTime(seconds: elapsed)) {
            reply.append("chapter", chapter + 1)
        }
        return reply
    }

    /// The playback rate heard now, the pitch algorithm, skip silence, and the silence cut from
    /// the current item so far.
    private func appendPace(to reply: inout Reply, item: PlayerItem?) {
        let pace = playback.pace
        reply.append("rate", PaceSettings.text(pace.currentRate))
        reply.append("pitchalgorithm", PaceSettings.name(of: pace.settings.pitchAlgorithm))
        reply.append("skipsilence", pace.settings.skipsSilence ? 1 : 0)
        if let item { reply.append("silenceskipped", seconds: item.silenceSkipped) }
    }
}

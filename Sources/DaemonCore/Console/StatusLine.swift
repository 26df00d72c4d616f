import Dispatch
import Foundation
import QueuePlayer

/// The foreground "UI": one line at the bottom of the terminal, redrawn in place
/// at most ten times a second (while playing, once a second as the elapsed time turns),
/// that says what plays: state, item, elapsed / duration and queue position, and the
/// podcast downloads running.
///
/// Shown only while the daemon is active and stdout is a terminal; it is drawn
/// only when its text changes. Its timer runs only while the line is shown and the
/// player plays: paused or stopped, the text changes only when a command changes the
/// state, which ``ControlEvents`` reports (``follow(_:)``), so an idle daemon on a
/// terminal does not wake up ten times a second to draw the same line.
///
/// Its state is owned by the partition's queue (a `QueueBound`: every access asserts it).
package final class StatusLine: Sendable {
    /// Redraws per second, at most.
    static let maximumRate = 10

    private struct Drawing {
        var timer: (any DispatchSourceTimer)?
        var isShown = false
        var lastText: String?
    }

    /// Where the line's state lives and its timer fires.
    private let queue: PartitionQueue
    /// What the line shows.
    private let playback: any PlaybackReading
    private let drawing: QueueBound<Drawing>

    /// The downloads running, shown after the song.
    private let transfers: TransferCount

    package init(queue: PartitionQueue, playback: any PlaybackReading, transfers: TransferCount) {
        self.queue = queue
        self.playback = playback
        self.transfers = transfers
        drawing = queue.bound(Drawing())
    }

    /// True if stdout is a terminal, where a status line belongs.
    package static var isWanted: Bool { Console.outputIsTerminal }

    /// Redraws after every change a command or the player reports (delivered on the
    /// partition's queue once a command's changes are all made): pause, play, stop, a seek,
    /// a new song, the queue. Starts or stops the timer to match.
    package func follow(_ events: ControlEvents) {
        events.subscribe(self) { [self] _ in refresh() }
    }

    /// Shows the line and keeps it current. Call on the partition's queue.
    package func show() {
        queue.assertOwned()
        guard !drawing.isShown else { return }
        drawing.isShown = true
        refresh()
    }

    /// Redraws for a change that no control event reports (a podcast download started or
    /// ended): paused, the line has no timer to notice it. Call on the partition's queue.
    func contentChanged() {
        queue.assertOwned()
        refresh()
    }

    /// Removes the line and stops its timer. Call on the partition's queue.
    package func hide() {
        queue.assertOwned()
        drawing.isShown = false
        stopTimer()
        drawing.lastText = nil
        Console.removeStatusLine()
    }

    /// Draws the line if its text changed, and runs the timer only while the player plays.
    private func refresh() {
        guard drawing.isShown else { return }
        playback.syncWithPlayer()
        redraw()
        if playback.playState == .play { startTimer() } else { stopTimer() }
    }

    /// While playing, the text changes when the elapsed time passes a whole second: the timer
    /// is set for just after that (never sooner than a tenth of a second), once a second
    /// rather than ten times.
    private func startTimer() {
        guard drawing.timer == nil else { return }
        let timer = queue.makeTimer()
        timer.setEventHandler { [self] in
            redraw()
            setTimer()
        }
        drawing.timer = timer
        setTimer()
        timer.activate()
    }

    private func setTimer() {
        guard let timer = drawing.timer else { return }
        let elapsed = playback.player.currentTime().seconds
        let untilNextSecond = elapsed.rounded(.down) + 1 - elapsed + 0.005
        let wait = max(untilNextSecond, 1 / Double(Self.maximumRate))
        timer.schedule(deadline: .now() + .nanoseconds(Int(wait * 1e9)), leeway: .milliseconds(5))
    }

    private func stopTimer() {
        drawing.timer?.cancel()
        drawing.timer = nil
    }

    private func redraw() {
        let text = Self.text(for: playback, transfers: transfers.value)
        guard text != drawing.lastText else { return }
        drawing.lastText = text
        Console.drawStatusLine(text)
    }

    /// `Playing  02-sweep.mp3  0:12 / 0:20  [2/4]`, `Paused ...` or `Stopped  [0/4]`, with
    /// `  downloads: 2` after it while podcast episodes download.
    static func text(for playback: any PlaybackReading, transfers: Int) -> String {
        return Self.playback(for: playback) + (transfers > 0 ? "  downloads: \(transfers)" : "")
    }

    private static func playback(for playback: any PlaybackReading) -> String {
        // First: reading the time brings the player's timeline up to date (see `status`).
        let seconds = playback.player.currentTime().seconds
        playback.syncWithPlayer()
        let count = playback.playQueue.count
        guard let position = playback.currentPosition, let item = playback.player.currentItem else {
            return "Stopped  [0/\(count)]"
        }
        let state = playback.playState == .play ? "Playing" : "Paused"
        let name = item.url.lastPathComponent.isEmpty ? "Unknown" : item.url.lastPathComponent
        let elapsed = clock(seconds)
        let duration = item.duration.map { clock($0.seconds) } ?? "-:--"
        return "\(state)  \(name)  \(elapsed) / \(duration)  [\(position + 1)/\(count)]"
    }

    private static func clock(_ seconds: Double) -> String {
        let whole = max(0, Int(seconds.rounded(.down)))
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }
}

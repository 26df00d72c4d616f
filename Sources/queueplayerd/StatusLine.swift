import Dispatch
import Foundation
import QueuePlayer

/// The foreground "UI": one line at the bottom of the terminal, redrawn in place
/// at most ten times a second, that says what plays: state, item, elapsed /
/// duration and queue position, and the podcast downloads running.
///
/// Shown only while the daemon is active and stdout is a terminal; it is drawn
/// only when its text changes, and its timer stops whenever it is hidden.
final class StatusLine: @unchecked Sendable {
    /// Redraws per second, at most.
    static let maximumRate = 10

    private let controller: PlaybackController
    private var timer: (any DispatchSourceTimer)?
    private var lastText: String?

    init(controller: PlaybackController) {
        self.controller = controller
    }

    /// True if stdout is a terminal, where a status line belongs.
    static var isWanted: Bool { Console.outputIsTerminal }

    /// Shows the line and keeps it current. Call on the controller's queue.
    func show() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: controller.queue)
        let interval = DispatchTimeInterval.milliseconds(1000 / Self.maximumRate)
        timer.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [self] in redraw() }
        timer.activate()
        self.timer = timer
    }

    /// Removes the line and stops its timer. Call on the controller's queue.
    func hide() {
        timer?.cancel()
        timer = nil
        lastText = nil
        Console.removeStatusLine()
    }

    private func redraw() {
        let text = Self.text(for: controller)
        guard text != lastText else { return }
        lastText = text
        Console.drawStatusLine(text)
    }

    /// `Playing  02-sweep.mp3  0:12 / 0:20  [2/4]`, `Paused ...` or `Stopped  [0/4]`, with
    /// `  downloads: 2` after it while podcast episodes download.
    static func text(for controller: PlaybackController) -> String {
        let transfers = controller.transferCount()
        return playback(for: controller) + (transfers > 0 ? "  downloads: \(transfers)" : "")
    }

    private static func playback(for controller: PlaybackController) -> String {
        // First: reading the time brings the player's timeline up to date (see `status`).
        let seconds = controller.player.currentTime().seconds
        let count = controller.queuedFiles.count
        guard let position = controller.currentPosition, let item = controller.player.currentItem else {
            return "Stopped  [0/\(count)]"
        }
        let state = controller.playState == .play ? "Playing" : "Paused"
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

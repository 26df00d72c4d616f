import DaemonCore
import WebAPI
import Logging
import MPDProtocol
import QueuePlayer

extension Daemon {
    /// Follows the chapter heard (``ChapterFollower``): each new one is printed as
    /// `Chapter: <title>` (as `Now playing:` is), is an `idle player` change, and is pushed to
    /// the WebSocket's clients. Every `player` change (a seek among them) has it look again.
    static func followChapters(player: QueuePlayer, partition: any PublishedPlayback, events: ControlEvents, web: WebServer?,
                               configuration: Configuration, logger: Logger) -> ChapterFollower {
        let printLine = configuration.printLine
        let follower = ChapterFollower(player: player, logger: logger) { item, index, newItem in
            // Posted first: a client that saw the line and then went idle waits for the next change.
            events.post([.player])
            let chapters = item.chapters
            if let index, index < chapters.count {
                let title = printable(chapters[index].title)
                printLine("Chapter: \(title.isEmpty ? "\(index + 1)" : title)")
            }
            web?.chapterChanged(item, index: index, newItem: newItem, partition: partition)
        }
        follower.start()
        events.subscribe(follower) { [weak follower] changed in
            if changed.contains(.player) { follower?.check() }
        }
        return follower
    }

    /// `text` without control characters (a title could carry a terminal's escape sequences).
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.properties.generalCategory != .control
            && $0.properties.generalCategory != .format }))
    }
}

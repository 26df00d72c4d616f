import DaemonCore
import QueuePlayer

extension WebServer {
    /// Pushes a stream's new name or title to every client: `{"event": "stream", "songid": N,
    /// "name": ..., "title": ...}`. Any thread (the engine's, where the title changed).
    package func streamChanged(_ item: PlayerItem, playback: any PublishedPlayback) {
        clients.broadcast(WebClients.streamEvent(item, songID: playback.songID(of: item)))
    }
}

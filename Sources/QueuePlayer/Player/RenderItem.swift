import Synchronization

/// An item as handed to the render thread: an opened decoder and where to start.
///
/// Each hand-off gets its own `id`, so the player can tell its events apart
/// even when the same ``PlayerItem`` is handed over again (after a seek).
final class RenderItem: Sendable {
    let id: UInt64
    let item: PlayerItem
    let decoder: any Decoder
    /// The first item frame the render thread decodes.
    let startFrame: Int64
    /// Set by the render thread before it reports a failure; read by the player after the event.
    let failure = Mutex<DecoderError?>(nil)

    init(id: UInt64, item: PlayerItem, decoder: any Decoder, startFrame: Int64) {
        self.id = id
        self.item = item
        self.decoder = decoder
        self.startFrame = startFrame
    }
}

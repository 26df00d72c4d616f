#if canImport(FoundationEssentials)
import struct FoundationEssentials.URL
#else
import struct Foundation.URL
#endif

/// A network resource's bytes as they arrive: the seam between a transport (HTTP, in the
/// `HTTPStreaming` module, or a test's scripted network) and the stream decoder
/// (``MPG123StreamDecoder``), so that this module never touches the network.
///
/// The transport writes the audio bytes (without any ICY metadata) into ``buffer`` off the
/// render thread, reconnects and resumes as it sees fit, and ends or fails the buffer; the
/// decoder reads the buffer on the render thread and asks it for restarts (a seek, the live
/// edge). What the transport learns about the stream (its name, its titles) reaches the item
/// through ``setObserver(_:)``.
public protocol StreamSource: AnyObject, Sendable {
    /// The resource, as the item names it.
    var url: URL { get }
    /// The bytes between the transport and the decoder.
    var buffer: StreamBuffer { get }
    /// The stream's name (`icy-name`), once the response said it.
    var name: String? { get }
    /// The title now heard (ICY `StreamTitle`), once known.
    var title: String? { get }
    /// Sets the one observer of the stream's description; called on the transport's threads.
    func setObserver(_ observer: @escaping @Sendable (StreamEvent) -> Void)
    /// Starts delivering (idempotent).
    func start()
    /// Stops the transport for good (the decoder is released); any thread.
    func close()
}

/// What changed in a stream's description.
public enum StreamEvent: Sendable, Hashable {
    /// The response's head came: the name, whether it is live.
    case described
    /// The title heard changed (ICY `StreamTitle`, announced as its audio is decoded).
    case titleChanged
    /// The buffer's fill may have crossed a threshold (empty, likely to keep up, full).
    case bufferChanged
}

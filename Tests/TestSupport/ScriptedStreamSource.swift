import Dispatch
import Foundation
import QueuePlayer
import Synchronization

/// The network double: a ``StreamSource`` whose bytes the test hands over when it likes
/// (``deliver(_:)``, ``finish()``), so buffering, stalls and their properties can be tested
/// under a virtual clock with nothing left to chance. It serves one resource from its start;
/// restarts (seeks) are not scripted. Owner: `state` (a mutex) for what the test and the item
/// read; the buffer's producer side is whichever thread calls `deliver` (one at a time).
public final class ScriptedStreamSource: StreamSource {
    public let url: URL
    public let buffer: StreamBuffer
    private let body: Data
    private struct State {
        var delivered = 0
        var title: String?
        var observer: (@Sendable (StreamEvent) -> Void)?
    }
    private let state = Mutex(State())

    /// A source of `body` (an MP3 file's bytes), described as `live` or of known length.
    public init(url: URL, body: Data, live: Bool = false) {
        self.url = url
        self.body = body
        buffer = StreamBuffer(capacity: 1 << 20, producerQueue: DispatchQueue(label: "scripted.stream"))
        buffer.setProducerWakeUp {}
        buffer.describe(length: live ? nil : Int64(body.count), isLive: live)
    }

    public var name: String? { "Scripted" }
    public var title: String? { state.withLock { $0.title } }
    public func setObserver(_ observer: @escaping @Sendable (StreamEvent) -> Void) { state.withLock { $0.observer = observer } }
    public func start() {}
    public func close() {}

    /// Bytes of the body delivered so far.
    public var delivered: Int { state.withLock { $0.delivered } }

    /// Hands over the next `count` bytes of the body (fewer at its end).
    public func deliver(_ count: Int) {
        let range = state.withLock { state -> Range<Int> in
            let end = min(body.count, state.delivered + count)
            defer { state.delivered = end }
            return state.delivered..<end
        }
        body[range].withUnsafeBytes { _ = buffer.write($0) }
        state.withLock { $0.observer }?(.bufferChanged)
    }

    /// Hands over the rest of the body and ends it.
    public func finish() {
        deliver(body.count)
        buffer.finish()
        state.withLock { $0.observer }?(.bufferChanged)
    }

    /// Changes the title, as an ICY block would.
    public func announce(title: String) {
        state.withLock { $0.title = title }
        state.withLock { $0.observer }?(.titleChanged)
    }
}

/// Opens every item with the scripted source the test made for its URL.
public final class ScriptedStreamFactory: DecoderFactory {
    private let sources: [URL: ScriptedStreamSource]

    public init(_ sources: [ScriptedStreamSource]) {
        self.sources = Dictionary(uniqueKeysWithValues: sources.map { ($0.url, $0) })
    }

    public func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder {
        guard let source = sources[url] else { throw DecoderError(url: url, reason: .fileNotFound) }
        return try MPG123StreamDecoder(source: source)
    }
}

import Foundation
import HTTPStreaming
import QueuePlayer
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A player of network items under a virtual clock, writing into a ``CapturingSink``: the
/// network is real (servers on 127.0.0.1), time moves as the test advances it, so a minute of
/// audio plays in moments and the PCM heard can be compared byte for byte.
final class StreamPlayback: Sendable {
    let clock = VirtualClock()
    let sink: CapturingSink
    let factory: HTTPStreamingDecoderFactory
    let player: QueuePlayer
    /// The items made of the URLs, in order (a refused one leaves the queue at once).
    let items: [PlayerItem]

    init(_ urls: [URL], configuration: HTTPStreamingConfiguration = StreamPlayback.quick, play: Bool = true) {
        sink = CapturingSink(wrapping: NullAudioSink(clock: clock))
        factory = HTTPStreamingDecoderFactory(configuration: configuration)
        items = urls.map { PlayerItem(url: $0) }
        player = QueuePlayer(items: items, sink: sink, decoderFactory: factory)
        if play { player.play() }
    }

    /// Patience for tests: retries for 3 s, stalls and head timeouts of a second.
    static var quick: HTTPStreamingConfiguration {
        var configuration = HTTPStreamingConfiguration(retryTime: 3)
        configuration.stallTimeout = 1
        configuration.headTimeout = 2
        configuration.firstRetryDelay = 0.1
        configuration.lowSpeedTime = 2
        return configuration
    }

    /// Advances the virtual clock (50 ms steps) until `condition` holds; false after `timeout` real seconds.
    func run(timeout: Double = 60, until condition: () -> Bool) -> Bool {
        let deadline = ChildProcess.now() + timeout
        while !condition() {
            if ChildProcess.now() > deadline { return false }
            clock.advance(bySeconds: 0.05)
            usleep(1_000)
        }
        return true
    }

    /// Plays until the queue is empty.
    func runToEnd(timeout: Double = 60) -> Bool {
        run(timeout: timeout) { player.items().isEmpty }
    }

    /// Closes the player (paused first: a virtual clock that no longer moves would never let
    /// the audio play out) and the HTTP client.
    func shutdown() async throws {
        player.pause()
        player.close()
        try await factory.shutdown()
    }

    /// The PCM of `url` decoded whole by the engine's file decoder.
    static func reference(_ url: URL) throws -> Data { try TestMedia.decodedPCM(url) }

    /// Where two PCM captures first differ (byte offset), for a failure message.
    static func firstDifference(_ a: Data, _ b: Data) -> String {
        if a == b { return "equal" }
        let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        return "\(a.count) vs \(b.count) bytes, first difference at byte \(index)"
    }
}

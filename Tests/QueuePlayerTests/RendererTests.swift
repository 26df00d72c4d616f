import Dispatch
import Foundation
@testable import QueuePlayer
import TestSupport
import Testing

/// The render thread on its own, driven through its mailbox as the player drives it,
/// for orderings the player's control queue makes hard to produce on purpose.
@Suite struct RendererTests {
    /// After giving back what the device held, the decoder is past the audible
    /// position: a `play` that arrives before the player's reload must not play
    /// from there (nor the chunk already decoded), only the reload may.
    @Test func aRendererThatGaveBackItsAudioPlaysNothingUntilItIsReloaded() throws {
        let url = try #require(TestMedia.stereo.first)
        let clock = VirtualClock()
        let sink = NullAudioSink(clock: clock)
        let eventQueue = DispatchQueue(label: "RendererTests.events")
        // Read here, on the test's thread, once the clock has settled.
        let ring = RenderEventRing(queue: eventQueue) {}
        func takeEvents() -> [RenderEvent] {
            var events: [RenderEvent] = []
            while let event = ring.pop() { events.append(event) }
            return events
        }
        let renderer = Renderer(sink: sink, events: ring)
        let participant = clock.addParticipant(settle: { eventQueue.sync {} },
                                               isQuiescent: { renderer.isQuiescent { sink.isWaitingForTime } })
        defer {
            // Paused, the thread ends without waiting for the (virtual) device to drain.
            renderer.mailbox.post(.pause)
            participant?.remove()
            renderer.stop()
        }
        renderer.start()
        func renderItem(id: UInt64, at frame: Int64) throws -> RenderItem {
            RenderItem(id: id, item: PlayerItem(url: url), decoder: try MPG123DecoderFactory().makeDecoder(for: url), startFrame: frame)
        }

        renderer.mailbox.post(.load(generation: 1, item: try renderItem(id: 1, at: 0), next: nil, playing: true))
        clock.advance(bySeconds: 1)
        renderer.mailbox.post(.pause)
        renderer.mailbox.post(.releaseOutput)
        renderer.mailbox.post(.play)
        clock.advance(bySeconds: 1)
        let events = takeEvents()
        let audible = try #require(events.first { $0.kind == .droppedOnPause }?.streamFrame,
                                   "giving back the audio reports where it was audible")
        #expect(!events.contains { $0.kind == .outputFailed }, "nothing was written to the closed device")
        #expect(!sink.isOpen, "nothing reopened the device before the reload")
        #expect(sink.framesPlayed == audible)

        renderer.mailbox.post(.load(generation: 2, item: try renderItem(id: 2, at: audible), next: nil, playing: true))
        clock.advance(bySeconds: 0.5)
        #expect(sink.isOpen)
        #expect(sink.framesPlayed == audible + 22_050)
    }
}

import Dispatch
import Foundation
import Synchronization
@testable import QueuePlayer
import TestSupport
import Testing

/// The render thread on its own, driven through its mailbox as the player drives it,
/// for orderings the player's control queue makes hard to produce on purpose.
@Suite struct RendererTests {
    /// A renderer on a null device with a virtual clock; its events are read on the test's thread.
    final class Harness {
        let clock = VirtualClock()
        let device: NullAudioSink
        let renderer: Renderer
        private let ring: RenderEventRing
        private let eventQueue: DispatchQueue
        private var participant: (any ClockRegistration)?

        /// `wrap` makes the sink the renderer writes to out of the null device.
        init(wrap: (NullAudioSink) -> any AudioSink = { $0 }) {
            device = NullAudioSink(clock: clock)
            let eventQueue = DispatchQueue(label: "RendererTests.events")
            self.eventQueue = eventQueue
            // Read by the test (on the ring's queue, its consumer), once the clock has settled.
            ring = RenderEventRing(queue: eventQueue) {}
            let renderer = Renderer(sink: wrap(device), events: ring)
            self.renderer = renderer
            let device = device
            participant = clock.addParticipant(settle: { eventQueue.sync {} },
                                               isQuiescent: { renderer.isQuiescent { device.isWaitingForTime } })
            renderer.start()
        }

        func stop() {
            // Paused, the thread ends without waiting for the (virtual) device to drain.
            renderer.mailbox.post(.pause)
            participant?.remove()
            renderer.stop()
        }

        func takeEvents() -> [RenderEvent] {
            eventQueue.sync {
                var events: [RenderEvent] = []
                while let event = ring.pop() { events.append(event) }
                return events
            }
        }

        func renderItem(id: UInt64, at frame: Int64) throws -> RenderItem {
            let url = try #require(TestMedia.stereo.first)
            return RenderItem(id: id, item: PlayerItem(url: url), decoder: try MPG123DecoderFactory().makeDecoder(for: url), startFrame: frame)
        }
    }

    /// After giving back what the device held, the decoder is past the audible
    /// position: a `play` that arrives before the player's reload must not play
    /// from there (nor the chunk already decoded), only the reload may.
    @Test func aRendererThatGaveBackItsAudioPlaysNothingUntilItIsReloaded() throws {
        let harness = Harness()
        defer { harness.stop() }
        let (renderer, clock, sink) = (harness.renderer, harness.clock, harness.device)

        renderer.mailbox.post(.load(generation: 1, item: try harness.renderItem(id: 1, at: 0), next: nil, playing: true))
        clock.advance(bySeconds: 1)
        renderer.mailbox.post(.pause)
        renderer.mailbox.post(.releaseOutput)
        renderer.mailbox.post(.play)
        clock.advance(bySeconds: 1)
        let events = harness.takeEvents()
        let audible = try #require(events.first { $0.kind == .droppedOnPause }?.streamFrame,
                                   "giving back the audio reports where it was audible")
        #expect(!events.contains { $0.kind == .outputFailed }, "nothing was written to the closed device")
        #expect(!sink.isOpen, "nothing reopened the device before the reload")
        #expect(sink.framesPlayed == audible)

        renderer.mailbox.post(.load(generation: 2, item: try harness.renderItem(id: 2, at: audible), next: nil, playing: true))
        clock.advance(bySeconds: 0.5)
        #expect(sink.isOpen)
        #expect(sink.framesPlayed == audible + 22_050)
    }

    /// A device that cannot pause in place drops its buffer when paused: the position given
    /// back for the reload is where it was audible, not the last frame written (the frames
    /// it held were never heard, though after the drop its delay no longer counts them).
    @Test func aDeviceThatCannotPauseInPlaceGivesBackTheAudiblePosition() throws {
        let dropping = Mutex<DroppingPauseSink?>(nil)
        let harness = Harness { device in
            let sink = DroppingPauseSink(wrapping: device)
            dropping.withLock { $0 = sink }
            return sink
        }
        defer { harness.stop() }
        let sink = try #require(dropping.withLock { $0 })

        harness.renderer.mailbox.post(.load(generation: 1, item: try harness.renderItem(id: 1, at: 0), next: nil, playing: true))
        harness.clock.advance(bySeconds: 1)
        harness.renderer.mailbox.post(.pause)
        harness.clock.advance(bySeconds: 0.1)
        let events = harness.takeEvents()
        let given = try #require(events.first { $0.kind == .droppedOnPause }?.streamFrame,
                                 "a pause that dropped the buffer reports where it was audible")
        let heard = try #require(sink.framesHeardAtDrop)
        #expect(heard > 0 && heard < 44_100 * 2, "the device played about a second before the pause (\(heard) frames)")
        #expect(given == heard, "the reload would start at frame \(given), but \(heard) frames had been heard")
    }
}

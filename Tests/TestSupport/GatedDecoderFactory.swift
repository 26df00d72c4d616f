import Foundation
import QueuePlayer
import Synchronization

/// A decoder factory that opens files with libmpg123 (``MPG123DecoderFactory``), except that
/// opening one chosen file waits until the test opens the gate, or until `timeout` seconds have
/// passed: a slow open (an hour-long file's scan) that the test controls. It records when that
/// open began and ended (``ChildProcess/now()``'s clock). State: `state` (a mutex).
public final class GatedDecoderFactory: DecoderFactory {
    private struct State {
        var isOpen = false
        var began: Double?
        var ended: Double?
        /// The decoder the gated open made, while something holds it.
        weak var decoder: AnyObject?
        var madeDecoder = false
    }

    private let gated: URL
    private let timeout: Double
    private let state = Mutex(State())
    private let gate = DispatchSemaphore(value: 0)
    private let real = MPG123DecoderFactory()

    public init(gating url: URL, timeout: Double) {
        gated = url
        self.timeout = timeout
    }

    /// When the gated open began and ended (nil until it did).
    public var began: Double? { state.withLock { $0.began } }
    public var ended: Double? { state.withLock { $0.ended } }

    /// True once the decoder the gated open made has been released by everyone (its file closed).
    public var gatedDecoderIsReleased: Bool { state.withLock { $0.madeDecoder && $0.decoder == nil } }

    /// Lets the gated open (and any later one) through.
    public func open() {
        let wasOpen = state.withLock { state in
            defer { state.isOpen = true }
            return state.isOpen
        }
        if !wasOpen { gate.signal() }
    }

    public func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder {
        guard url == gated, !state.withLock({ $0.isOpen }) else { return try real.makeDecoder(for: url) }
        state.withLock { $0.began = ChildProcess.now() }
        _ = gate.wait(timeout: .now() + timeout)
        let decoder = try real.makeDecoder(for: url)
        state.withLock { state in
            state.isOpen = true
            state.ended = ChildProcess.now()
            state.decoder = decoder
            state.madeDecoder = true
        }
        return decoder
    }
}

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

    /// Lets the gated open (and any later one) through.
    public func open() {
        let wasOpen = state.withLock { state in
            defer { state.isOpen = true }
            return state.isOpen
        }
        if !wasOpen { gate.signal() }
    }

    public func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder {
        if url == gated, !state.withLock({ $0.isOpen }) {
            state.withLock { $0.began = ChildProcess.now() }
            _ = gate.wait(timeout: .now() + timeout)
            state.withLock { state in
                state.isOpen = true
                state.ended = ChildProcess.now()
            }
        }
        return try real.makeDecoder(for: url)
    }
}

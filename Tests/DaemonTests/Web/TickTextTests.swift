@testable import DaemonCore
@testable import WebAPI
import TestSupport
import Testing

/// A tick's text, made on the clock thread without `String(format:)`: the same text the JSON
/// encoder writes for the elapsed time rounded to 0.1 ms.
@Suite struct TickTextTests {
    @Test func theElapsedTimeIsWrittenAsTheEncoderWritesIt() {
        #expect(WebSocketClient.tick(subscription: 1, songID: 3, elapsed: 12.34)
                == #"{"event":"time","subscription":1,"songid":3,"elapsed":12.34,"state":"play"}"#)
        #expect(WebSocketClient.tick(subscription: 2, songID: nil, elapsed: 10)
                == #"{"event":"time","subscription":2,"songid":null,"elapsed":10,"state":"play"}"#)
        var random = SplitMix64(seed: 31)
        var values: [Double] = [0, 0.00004, 0.00005, 0.0001, 0.001, 0.01, 0.1, 0.9999, 0.99995, 1.0501, 59.99, 3_600.0007, -0.5, -0.00006]
        for _ in 0..<10_000 { values.append(Double(random.next() % 100_000_000) / 1_000_000) }
        for value in values {
            var text = ""
            WebSocketClient.appendFixed4(value, to: &text)
            #expect(text == JSONValue.number((value * 10_000).rounded() / 10_000), "\(value)")
        }
    }
}

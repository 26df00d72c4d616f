import Dispatch
import Foundation
@testable import QueuePlayer
import Synchronization
import Testing

/// ``StreamBuffer`` is `@unchecked Sendable` on a contract: one thread at a time is its
/// consumer, one its producer. Debug builds (the tests') check the contract at run time; these
/// tests show the check stops a second caller of a side, and lets the two sides run at once.
@Suite struct StreamBufferOwnerTests {
    /// Two calls of the consumer's side at once stop the program (here the second one is made
    /// from inside the first, which is the same overlap two threads would make).
    @Test func aSecondConsumerAtOnceStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let buffer = StreamBuffer(capacity: 4096, producerQueue: DispatchQueue(label: "owner.producer"))
            buffer.asConsumer { buffer.discardBuffered() }
        }
    }

    @Test func aSecondProducerAtOnceStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let buffer = StreamBuffer(capacity: 4096, producerQueue: DispatchQueue(label: "owner.producer"))
            buffer.asProducer { buffer.finish() }
        }
    }

    /// The sides are checked apart: a producer writing on one thread while the consumer reads on
    /// another is the buffer's purpose, and every byte arrives once, in order. Each side waits
    /// through the buffer's own wake-ups (the producer's Dispatch source, the consumer's closure),
    /// never by polling; a wake-up that never comes ends the test at its deadline.
    @Test func theProducerAndTheConsumerRunAtOnce() async throws {
        let buffer = StreamBuffer(capacity: 4096, producerQueue: DispatchQueue(label: "owner.producer"))
        let roomFreed = DispatchSemaphore(value: 0)
        let dataArrived = DispatchSemaphore(value: 0)
        buffer.setProducerWakeUp { roomFreed.signal() }
        buffer.setConsumerWakeUp { dataArrived.signal() }
        let total = 1 << 20
        let deadline = ContinuousClock.now + .seconds(30)
        let wallDeadline = DispatchTime.now() + .seconds(30)
        let producer = Thread {
            var next = 0
            var chunk = [UInt8](repeating: 0, count: 1000)
            while next < total, ContinuousClock.now < deadline {
                let count = min(chunk.count, total - next)
                for index in 0..<count { chunk[index] = UInt8(truncatingIfNeeded: next + index) }
                var offset = 0
                while offset < count, ContinuousClock.now < deadline {
                    offset += chunk.withUnsafeBytes { buffer.write(UnsafeRawBufferPointer(rebasing: $0[offset..<count])) }
                    if offset < count, buffer.producerWillWait(forRoom: count - offset) {
                        _ = roomFreed.wait(timeout: wallDeadline)
                        buffer.producerHasRoom()
                    }
                }
                next += count
            }
            buffer.finish()
        }
        producer.start()
        var received = 0
        var mismatches = 0
        let destination = UnsafeMutableRawPointer.allocate(byteCount: 1500, alignment: 1)
        defer { destination.deallocate() }
        while !(buffer.hasEnded && buffer.bufferedBytes == 0) {
            #expect(ContinuousClock.now < deadline, "the consumer got \(received) of \(total) bytes in 30 s")
            if ContinuousClock.now >= deadline { break }
            let count = buffer.read(into: destination, count: 1500)
            for index in 0..<count where destination.load(fromByteOffset: index, as: UInt8.self) != UInt8(truncatingIfNeeded: received + index) {
                mismatches += 1
            }
            received += count
            if count == 0, buffer.consumerWillWait() { _ = dataArrived.wait(timeout: wallDeadline) }
        }
        #expect(received == total)
        #expect(mismatches == 0)
    }
}

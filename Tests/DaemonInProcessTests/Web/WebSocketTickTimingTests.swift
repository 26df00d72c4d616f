import DaemonCore
import Foundation
import TestSupport
import Testing

/// The WebSocket's pushed time ticks measured against the clock, against the daemon in process
/// with Python's `websockets` as the client (`Tests/IntegrationTests/Scripts/ws_api.py`).
/// A suite of its own: scripts/run-tests runs it in its quiet phase, after the others, so that
/// the suite's own test processes do not load the machine it measures.
@Suite(.serialized) struct WebSocketTickTimingTests {
    /// The figures of the bench's WebSocket row, measured with bounds for a 2-core machine: the
    /// spacing of ticks at 10 ms as they arrive, and the pushed `elapsed` against the audible
    /// clock (a line through the ticks: the audible position runs at the wall clock's rate on
    /// the null output).
    @Test func ticksAtTenMillisecondsFollowTheAudibleClock() throws {
        let daemon = try InProcessWebDaemon()
        defer { daemon.stop() }
        let steps = try daemon.run("ticks", ["0.01", "5"])
        let ticks = (steps["ticks"] as? [[Any]] ?? []).compactMap { row -> (at: Double, elapsed: Double, song: Int)? in
            guard row.count == 5, let at = row[0] as? Double, let song = row[2] as? Int else { return nil }
            return (at, (row[1] as? Double) ?? Double(row[1] as? Int ?? 0), song)
        }
        #expect(ticks.count >= 350, "5 s at 10 ms: \(ticks.count) ticks")
        #expect(ticks.allSatisfy { $0.song == ticks.first?.song })
        #expect(steps["after unsubscribe"] as? Int == 0)
        guard ticks.count > 10 else { return }
        // Spacing as received, against 10 ms.
        let gaps: [Double] = zip(ticks.dropFirst(), ticks).map { ($0.at - $1.at) * 1000 }
        let intervalErrors: [Double] = gaps.map { abs($0 - 10) }
        // How far each tick's elapsed is past its multiple of 10 ms (the observer's own lateness).
        let lateness: [Double] = ticks.map { tick -> Double in
            let past = (tick.elapsed - (tick.elapsed / 0.01).rounded(.down) * 0.01) * 1000
            return past > 9.99 ? 0 : past
        }
        // elapsed - arrival: constant if every tick says where the audio is when it arrives.
        let offsets: [Double] = ticks.map { $0.elapsed - $0.at }
        let median = percentile(offsets, 50)
        let deviation: [Double] = offsets.map { abs($0 - median) * 1000 }
        let elapsedSteps: [Double] = zip(ticks.dropFirst(), ticks).map { ($0.elapsed - $1.elapsed) * 1000 }
        let figures: [Double] = [percentile(intervalErrors, 50), percentile(intervalErrors, 99), intervalErrors.max() ?? 0,
                                 percentile(lateness, 50), percentile(lateness, 99), percentile(deviation, 50), percentile(deviation, 99)]
        let shown = figures.map { String(format: "%.2f", $0) }
        print("web ticks at 10 ms, \(ticks.count) ticks: interval error p50 \(shown[0]) ms, p99 \(shown[1]) ms, max \(shown[2]) ms; "
              + "elapsed past its multiple p50 \(shown[3]) ms, p99 \(shown[4]) ms; elapsed vs arrival p50 \(shown[5]) ms, p99 \(shown[6]) ms")
        #expect(percentile(intervalErrors, 50) < 3, "interval error p50")
        #expect(percentile(intervalErrors, 99) < 25, "interval error p99")
        #expect(percentile(deviation, 50) < 5, "elapsed against the audible clock, p50")
        #expect(percentile(deviation, 99) < 30, "elapsed against the audible clock, p99")
        #expect(elapsedSteps.allSatisfy { $0 > 0 }, "elapsed only grows within an item")
        #expect(percentile(elapsedSteps, 50) > 9 && percentile(elapsedSteps, 50) < 11)
    }
}

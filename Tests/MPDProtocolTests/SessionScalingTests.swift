import Dispatch
import MPDProtocol
import Testing

/// A session's work grows linearly with its input: a client may send a command list of
/// 2 MiB (mpd's limit), or pipeline as many commands.
@Suite struct SessionScalingTests {
    /// One run: seconds to feed `text` in 512-byte reads and run it (nil past `budget`).
    static func run(_ bytes: [UInt8], budget: Double) -> (seconds: Double?, reply: String) {
        var session = ClientSession()
        var output = ""
        let start = DispatchTime.now().uptimeNanoseconds
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 512, bytes.count)
            output += transcript(session.receive(bytes[offset..<end]) { _, _ throws(MPDError) in .empty })
            offset = end
            if Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 > budget { return (nil, output) }
        }
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, output)
    }

    /// The fastest of five runs of `small` and of `large`, taken in turns so that a burst
    /// of load on the machine slows both alike; nil if a run took over `budget` seconds.
    static func fastest(_ small: String, _ large: String, budget: Double = 3)
        -> (small: Double?, large: Double?, smallReply: String, largeReply: String) {
        let smallBytes = Array(small.utf8), largeBytes = Array(large.utf8)
        var best = (small: Double.infinity, large: Double.infinity)
        var replies = ("", "")
        for _ in 0..<5 {
            let first = run(smallBytes, budget: budget)
            let second = run(largeBytes, budget: budget)
            replies = (first.reply, second.reply)
            guard let smallSeconds = first.seconds, let largeSeconds = second.seconds else {
                return (first.seconds, second.seconds, replies.0, replies.1)
            }
            best = (min(best.small, smallSeconds), min(best.large, largeSeconds))
        }
        return (best.small, best.large, replies.0, replies.1)
    }

    /// 4 times the lines must take about 4 times as long, not 16 (the list was copied for
    /// every line added). The bound 8 leaves a factor 2 for noise either way.
    @Test(arguments: [false, true])
    func aCommandListIsCollectedAndRunInLinearTime(okMode: Bool) {
        let begin = okMode ? "command_list_ok_begin\n" : "command_list_begin\n"
        func list(_ count: Int) -> String { begin + String(repeating: "ping\n", count: count) + "command_list_end\n" }
        let result = Self.fastest(list(16_384), list(65_536))
        #expect(result.smallReply == (okMode ? String(repeating: "list_OK\n", count: 16_384) : "") + "OK\n")
        #expect(result.largeReply.utf8.count == (okMode ? 8 * 65_536 : 0) + 3)
        guard let smallSeconds = result.small, let largeSeconds = result.large else {
            Issue.record("a list of 16,384 or 65,536 pings took over 3 s: \(result.small ?? -1) s, \(result.large ?? -1) s")
            return
        }
        print("pings in a list (ok mode \(okMode)): 16,384 in \(smallSeconds) s, 65,536 in \(largeSeconds) s")
        #expect(largeSeconds / smallSeconds < 8, "16,384 lines: \(smallSeconds) s, 65,536 lines: \(largeSeconds) s")
    }

    /// The same for pipelined commands outside a list (the line buffer).
    @Test func pipelinedCommandsAreTakenInLinearTime() {
        let result = Self.fastest(String(repeating: "ping\n", count: 16_384), String(repeating: "ping\n", count: 65_536))
        #expect(result.largeReply == String(repeating: "OK\n", count: 65_536))
        guard let smallSeconds = result.small, let largeSeconds = result.large else {
            Issue.record("16,384 or 65,536 pipelined pings took over 3 s")
            return
        }
        #expect(largeSeconds / smallSeconds < 8, "16,384 lines: \(smallSeconds) s, 65,536 lines: \(largeSeconds) s")
    }
}

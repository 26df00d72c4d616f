import Dispatch
import MPDProtocol
import Testing

/// A session's work grows linearly with its input: a client may send a command list of
/// 2 MiB (mpd's limit), or pipeline as many commands.
@Suite struct SessionScalingTests {
    /// Seconds to feed `text` in 512-byte reads (as the daemon reads) and run it; the
    /// fastest of three runs, each stopped after `budget` seconds (nil then).
    static func seconds(toRun text: String, budget: Double = 3) -> (seconds: Double?, reply: String) {
        let bytes = Array(text.utf8)
        var best: Double?
        var reply = ""
        for _ in 0..<3 {
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
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            best = min(best ?? seconds, seconds)
            reply = output
        }
        return (best, reply)
    }

    /// 4 times the lines must take about 4 times as long, not 16 (the list was copied for
    /// every line added). The bound 8 leaves a factor 2 for noise either way.
    @Test(arguments: [false, true])
    func aCommandListIsCollectedAndRunInLinearTime(okMode: Bool) {
        let begin = okMode ? "command_list_ok_begin\n" : "command_list_begin\n"
        func list(_ count: Int) -> String { begin + String(repeating: "ping\n", count: count) + "command_list_end\n" }
        let small = Self.seconds(toRun: list(16_384))
        let large = Self.seconds(toRun: list(65_536))
        #expect(small.reply == (okMode ? String(repeating: "list_OK\n", count: 16_384) : "") + "OK\n")
        #expect(large.reply.utf8.count == (okMode ? 8 * 65_536 : 0) + 3)
        guard let smallSeconds = small.seconds, let largeSeconds = large.seconds else {
            Issue.record("a list of 16,384 or 65,536 pings took over 3 s: \(small.seconds ?? -1) s, \(large.seconds ?? -1) s")
            return
        }
        print("pings in a list (ok mode \(okMode)): 16,384 in \(smallSeconds) s, 65,536 in \(largeSeconds) s")
        #expect(largeSeconds / smallSeconds < 8, "16,384 lines: \(smallSeconds) s, 65,536 lines: \(largeSeconds) s")
    }

    /// The same for pipelined commands outside a list (the line buffer).
    @Test func pipelinedCommandsAreTakenInLinearTime() {
        let small = Self.seconds(toRun: String(repeating: "ping\n", count: 16_384))
        let large = Self.seconds(toRun: String(repeating: "ping\n", count: 65_536))
        #expect(large.reply == String(repeating: "OK\n", count: 65_536))
        guard let smallSeconds = small.seconds, let largeSeconds = large.seconds else {
            Issue.record("16,384 or 65,536 pipelined pings took over 3 s")
            return
        }
        #expect(largeSeconds / smallSeconds < 8, "16,384 lines: \(smallSeconds) s, 65,536 lines: \(largeSeconds) s")
    }
}

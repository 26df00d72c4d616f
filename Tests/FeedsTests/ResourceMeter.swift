import Foundation
import Glibc

/// Wall time and peak memory of a piece of work, from the kernel's own accounting: the
/// peak resident set size (`VmHWM`) is reset to the current size through
/// `/proc/self/clear_refs` before the work, and read after it. The process is shared with
/// other tests, so bounds on the figure must be generous; what they catch is the
/// difference between megabytes and the gigabytes of an unbounded expansion.
struct ResourceMeter {
    var seconds: Double
    /// How far the peak resident set rose above the resident set at the start, in bytes.
    var peakGrowth: Int

    static func measure<T>(_ work: () throws -> T) throws -> (result: T, meter: ResourceMeter) {
        let before = try status("VmRSS")
        let clear = open("/proc/self/clear_refs", O_WRONLY)
        guard clear >= 0, write(clear, "5", 1) == 1 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        close(clear)
        let start = ContinuousClock.now
        let result = try work()
        let elapsed = ContinuousClock.now - start
        let peak = try status("VmHWM")
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (result, ResourceMeter(seconds: seconds, peakGrowth: max(0, peak - before)))
    }

    /// A `kB` line of `/proc/self/status`, in bytes.
    private static func status(_ key: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            if let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") { return kilobytes * 1024 }
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}

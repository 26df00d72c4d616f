import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says a daemon child process uses.
extension LifecycleDaemon {
    /// CPU time so far (user + system, all threads), in seconds, from `/proc/PID/stat`.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // After "pid (comm) ": state is field 3, utime and stime fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The resident set size in kB, from `/proc/PID/status`.
    var residentKilobytes: Int? { process.statusKilobytes("VmRSS") }

    /// The most the resident set size has been, in kB (`VmHWM`).
    var peakResidentKilobytes: Int? { process.statusKilobytes("VmHWM") }
}

extension ControlDaemon {
    /// The most the resident set size has been, in kB (`VmHWM`).
    var peakResidentKilobytes: Int? { process.statusKilobytes("VmHWM") }
}

extension ChildProcess {
    /// A `kB` line of `/proc/PID/status` (`VmRSS`, `VmHWM`), nil if the process is gone.
    func statusKilobytes(_ key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}

extension Dictionary where Key == String, Value == String {
    /// A `status` reply's `elapsed`, in seconds (0 when absent).
    var elapsedSeconds: Double { self["elapsed"].flatMap(Double.init) ?? 0 }
}

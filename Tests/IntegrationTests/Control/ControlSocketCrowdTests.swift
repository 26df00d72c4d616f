import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A crowd of idle local clients: when the crowd takes every descriptor the daemon's process
/// has (prlimit), it waits instead of spinning on `accept` (its process's CPU time). That it
/// serves at most `--max-clients`: DaemonInProcessTests' suite of the same name.
@Suite(.serialized) struct ControlSocketCrowdTests {
    @Test func descriptorsRunOutWithoutSpinningAndClientsAreServedAgainWhenTheCrowdLeaves() throws {
        // The test opens 1,100 clients: its own soft limit must allow them.
        var own = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)
        try #require(own.rlim_max >= 1_400, "the test needs 1,400 descriptors; the hard limit is \(own.rlim_max)")
        if own.rlim_cur < 1_400 {
            own.rlim_cur = 1_400
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &own)
        }
        // 1,024 descriptors, soft and hard: raising the soft limit gains nothing here.
        let daemon = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--max-clients", "2000"], fileLimit: 1_024)
        defer { daemon.stop() }
        // Non-blocking connects: once the daemon accepts no more and its backlog is full, a
        // connect is refused at once (EAGAIN) instead of waiting.
        var crowd: [Int32] = []
        var refused = 0
        // A connect the backlog refuses is tried again until the daemon has taken none for a
        // second (it accepts as fast as it can, but not as fast as a loop connects).
        var lastAccepted = ChildProcess.now()
        while crowd.count + refused < 1_100 {
            if let fd = connectWithoutWaiting(daemon.socket) {
                crowd.append(fd)
                lastAccepted = ChildProcess.now()
            } else if ChildProcess.now() - lastAccepted > 1 {
                refused += 1
            } else {
                _ = waitUntil(timeout: 0.005) { false }
            }
        }
        #expect(crowd.count > 1_000, "only \(crowd.count) of 1,100 clients connected (\(refused) refused)")
        // Descriptors run out: the log says so, once.
        #expect(waitUntil(timeout: 10) { daemon.process.standardError.contains("cannot accept a client: no file descriptor left") })
        // Idle with every descriptor taken: under 5 % of a core over two seconds.
        let pid = daemon.process.processIdentifier
        let before = cpuSeconds(pid)
        let start = ChildProcess.now()
        _ = waitUntil(timeout: 2) { false }
        let share = (cpuSeconds(pid) - before) / (ChildProcess.now() - start)
        #expect(share < 0.05, "the daemon used \(Int(share * 100)) % of a core while its descriptors were all taken")
        // The crowd leaves; a new client is served again.
        for fd in crowd { close(fd) }
        crowd = []
        let client = try #require(waitForGreetedClient(daemon.socket, timeout: 5))
        #expect(try client.request("ping") == ["OK"])
        client.close()
    }

    /// A connected socket, or nil when the connect would have to wait (the backlog is full).
    private func connectWithoutWaiting(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// CPU time of process `pid` so far (user + system), in seconds.
    private func cpuSeconds(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

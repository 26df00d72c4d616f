import Foundation
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A Zeroconf stack of the test's own: a private D-Bus system bus, and on it an avahi-daemon
/// that sees nothing but a loopback interface (`Scripts/private_avahi.sh`: its own network
/// and mount namespaces, `allow-interfaces=lo`, no IPv6, no wide area, nothing of this
/// machine published). The daemon under test and `avahi-browse` reach it through
/// ``busAddress`` (`DBUS_SYSTEM_BUS_ADDRESS`), as they would reach the system's Avahi.
///
/// Each daemon runs under the script with a lifeline (a FIFO whose write end this object
/// holds): dropping it, or the test process ending, ends the daemon.
final class AvahiServer: @unchecked Sendable {
    static let script = LibraryTagsTests.scripts.appendingPathComponent("private_avahi.sh")

    let directory: URL
    /// `DBUS_SYSTEM_BUS_ADDRESS` for the daemon and `avahi-browse`.
    let busAddress: String
    /// The processes and their lifelines; `lock` owns them (a test's thread, and `deinit`).
    private let lock = NSLock()
    private var bus: (process: ChildProcess, lifeline: Int32)?
    private var avahi: (process: ChildProcess, lifeline: Int32)?

    /// The bus and, unless `withAvahi` is false, avahi-daemon, both ready.
    init(withAvahi: Bool = true) throws {
        directory = try TestMedia.scratchDirectory()
        let socket = directory.appendingPathComponent("system_bus_socket").path
        busAddress = "unix:path=\(socket)"
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(to: directory.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        try """
            [server]
            host-name=qptest
            domain-name=local
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=lo
            enable-dbus=yes
            ratelimit-interval-usec=1000000
            ratelimit-burst=1000
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-addresses=yes
            publish-hinfo=no
            publish-workstation=no
            publish-domain=no
            publish-aaaa-on-ipv4=no
            [reflector]
            enable-reflector=no
            """.write(to: directory.appendingPathComponent("avahi.conf"), atomically: true, encoding: .utf8)
        let bus = try Self.start("bus", in: directory)
        self.bus = bus
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: socket) }) else {
            throw UnixSocketError("the private D-Bus did not start within 10 s: \(bus.process.standardError)")
        }
        if withAvahi { try startAvahi() }
    }

    deinit {
        stopAvahi()
        if let bus { Self.end(bus) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts avahi-daemon and waits until it has published its host name on the loopback.
    func startAvahi() throws {
        let started = try Self.start("avahi", in: directory, environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress])
        lock.withLock { avahi = started }
        guard waitUntil(timeout: 20, { started.process.standardError.contains("Server startup complete") }) else {
            throw UnixSocketError("avahi-daemon did not start within 20 s: \(started.process.standardError)")
        }
    }

    /// Stops avahi-daemon (as `systemctl stop avahi-daemon` would) and waits until it has gone.
    func stopAvahi() {
        guard let running = lock.withLock({ () -> (process: ChildProcess, lifeline: Int32)? in
            defer { avahi = nil }
            return avahi
        }) else { return }
        Self.end(running)
    }

    /// What avahi-daemon wrote so far (its log).
    var avahiLog: String { lock.withLock { avahi?.process.standardError ?? "" } }

    /// `avahi-browse -rpt _mpd._tcp` against this Avahi: the resolved services, each as
    /// `(interface, name, port)`.
    func browse() throws -> [(interface: String, name: String, port: Int)] {
        let run = try ToolRun.run("/usr/bin/avahi-browse", ["-rpt", "_mpd._tcp"],
                                  environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress], timeout: 20)
        guard run.status == 0 else { throw UnixSocketError("\(run)") }
        // `=;lo;IPv4;queueplayerd\032@\032host;Music Player Daemon;local;qptest.local;127.0.0.1;6600;`
        return run.stdout.compactMap { line in
            let fields = line.split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count >= 9, fields[0] == "=", let port = Int(fields[8]) else { return nil }
            return (String(fields[1]), Self.unescape(String(fields[3])), port)
        }
    }

    /// avahi-browse's parsable names escape bytes as `\DDD` (decimal) and `\.`/`\\`.
    static func unescape(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "\\"), !utf8.isEmpty else { bytes.append(byte); continue }
            let digits = utf8.prefix(3)
            if digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }), let value = UInt8(String(decoding: digits, as: UTF8.self)) {
                bytes.append(value)
                utf8.removeFirst(3)
            } else {
                bytes.append(utf8.removeFirst())
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func start(_ part: String, in directory: URL, environment: [String: String] = [:]) throws
        -> (process: ChildProcess, lifeline: Int32) {
        let fifo = directory.appendingPathComponent("lifeline-\(part)").path
        unlink(fifo)
        guard mkfifo(fifo, 0o600) == 0 else { throw UnixSocketError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        let process = try ChildProcess(program: "/bin/sh", [script.path, part, directory.path], environment: environment)
        // The script opens the read end first thing; until it has, opening the write end
        // without blocking fails with ENXIO.
        var lifeline: Int32 = -1
        _ = waitUntil(timeout: 10) {
            lifeline = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            return lifeline >= 0 || !process.isRunning
        }
        guard lifeline >= 0 else {
            process.terminate()
            throw UnixSocketError("\(part) did not start: \(process.standardError)")
        }
        return (process, lifeline)
    }

    private static func end(_ running: (process: ChildProcess, lifeline: Int32)) {
        close(running.lifeline)
        if running.process.wait(timeout: 10) == nil { running.process.terminate() }
    }
}

import Foundation
import Location
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Debian's `gpsfake` (`scripts/bootstrap` installs gpsd and gpsd-clients) replaying an NMEA
/// log the test made, through a real gpsd listening on a free port of 127.0.0.1: what a
/// receiver on the road sends, as the iOS Simulator's "Freeway Drive" replays a drive.
///
/// gpsfake starts its gpsd at once and feeds the log once (`-1`) from its start, `cycle`
/// seconds between sentences (two an epoch: RMC and GGA), whether or not a client watches: gpsd
/// opens the pty only for a watching client, so what was sent before is lost, as a receiver's
/// sentences are while nobody listens. ``stop()`` (and `deinit`) end both, gpsd first; nothing
/// is left running.
final class GPSFake {
    /// One epoch of the log: a fix, or (`fix` false) a receiver that has lost it.
    struct Epoch {
        var coordinate: Coordinate
        /// Metres per second.
        var speed: Double
        /// Degrees from true north.
        var course: Double
        var time: Date
        /// gpsd's horizontal error estimate is HDOP × 19 m when the receiver gives no better (no GST error ellipse).
        var hdop = 0.5
        var fix = true

        /// The accuracy gpsd reports for this epoch: `eph`.
        var expectedAccuracy: Double { hdop * 19 }
    }

    let port: Int
    let log: URL
    private let directory: URL
    private var process: ChildProcess?

    /// `epochs` as NMEA into a scratch log; gpsfake and its gpsd on `port` (or a free one).
    init(epochs: [Epoch], cycle: Double = 0.05, port: Int? = nil) throws {
        directory = try TestMedia.scratchDirectory()
        log = directory.appendingPathComponent("drive.nmea")
        // gpsd hunts for the device's speed and protocol for a second or two after a client
        // watches: what it is sent meanwhile is lost. Satellites in view ($GPGSV, no fix, no TPV)
        // for 2.5 s come first, so the drive is heard from its first epoch.
        let leadIn = String(repeating: Self.sentence("GPGSV,1,1,04,01,40,083,46,02,17,308,41,12,07,344,39,14,22,228,45"),
                            count: Int(2.5 / cycle) + 1)
        try (leadIn + Self.nmea(epochs)).write(to: log, atomically: true, encoding: .ascii)
        self.port = try port ?? SnapcastPair.freePort()
        // gpsfake hands its pty to gpsd through gpsd's control socket as soon as the socket's
        // file exists, and if connecting to it fails, it carries on without telling (its
        // `add_device` drops the error): gpsd never has the device and every client waits for
        // ever. Seen once in 30 starts on a loaded machine, and as a test that got no fix at
        // all. So a start counts once gpsd has the device (its log at -D 2 says so:
        // ``deviceAdded``; gpsd's `?DEVICES` lists only devices it has opened, and it opens them
        // only for a watching client); otherwise gpsfake is stopped and started again.
        var why = ""
        for _ in 1...3 {
            let child = try ChildProcess(program: "/usr/bin/gpsfake", ["-P", String(self.port), "-1", "-c", String(cycle), "-q", "-D", "2", log.path])
            process = child
            let port = self.port
            if waitUntil(timeout: 10, { !child.isRunning || SnapcastPair.accepts(port: port) }), child.isRunning,
               waitUntil(timeout: 5, { !child.isRunning || child.standardError.contains(Self.deviceAdded) }), child.isRunning {
                return
            }
            why = child.isRunning ? "gpsd on \(port) was given no device within 5 s: \(child.standardError)" : "gpsfake ended: \(child.standardError)"
            stop()
        }
        throw UnixSocketError("gpsfake did not start on \(self.port): \(why)")
    }

    /// What gpsd logs (at `-D 2`, with each client's traffic) when its control socket hands it a
    /// device: `gpsd:CLIENT: <= control(6): +/dev/pts/2`.
    private static let deviceAdded = "): +/dev/"

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var isRunning: Bool { process?.isRunning ?? false }

    /// What gpsfake and its gpsd printed (gpsd at `-D 2`: devices added, each client's
    /// traffic): for a failing test's message.
    var standardError: String { process?.standardError ?? "" }

    /// Ends gpsfake and its gpsd and waits until the port is free.
    func stop() {
        guard let process else { return }
        self.process = nil
        // gpsd first (SIGTERM: it closes its sockets and removes its control socket), then
        // gpsfake, by SIGKILL: its handler for SIGINT and SIGTERM only stops gpsd and returns, and
        // a gpsfake blocked writing to a pty nobody reads (its buffer full) never gets further.
        let children = Self.children(of: process.processIdentifier)
        for child in children { kill(child, SIGTERM) }
        if process.isRunning {
            process.send(SIGKILL)
            process.wait(timeout: 5)
        }
        if !waitUntil(timeout: 5, { !SnapcastPair.accepts(port: port) }) {
            for child in children { kill(child, SIGKILL) }
            _ = waitUntil(timeout: 5) { !SnapcastPair.accepts(port: port) }
        }
    }

    /// A drive along `bearing` at `speed` m/s from `start`, one epoch a second.
    static func drive(from start: Coordinate, bearing: Double, speed: Double, seconds: Int, at time: Date,
                      hdop: Double = 0.5) -> [Epoch] {
        (0..<seconds).map { second in
            Epoch(coordinate: start.moved(by: speed * Double(second), bearing: bearing), speed: speed, course: bearing,
                  time: time.addingTimeInterval(Double(second)), hdop: hdop)
        }
    }

    /// The epochs as NMEA 0183: `$GPRMC`, `$GPGGA` and `$GPGST` each, minutes to six decimals
    /// (2 mm), checksummed.
    static func nmea(_ epochs: [Epoch]) -> String {
        var text = ""
        for epoch in epochs {
            var seconds = time_t(epoch.time.timeIntervalSince1970)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let clock = String(format: "%02d%02d%02d.00", parts.tm_hour, parts.tm_min, parts.tm_sec)
            let date = String(format: "%02d%02d%02d", parts.tm_mday, parts.tm_mon + 1, parts.tm_year % 100)
            let (lat, ns) = minutes(epoch.coordinate.latitude, degreeDigits: 2, positive: "N", negative: "S")
            let (lon, ew) = minutes(epoch.coordinate.longitude, degreeDigits: 3, positive: "E", negative: "W")
            if epoch.fix {
                let knots = String(format: "%.3f", epoch.speed / 0.514444)
                text += sentence("GPRMC,\(clock),A,\(lat),\(ns),\(lon),\(ew),\(knots),\(String(format: "%.2f", epoch.course)),\(date),,,A")
                text += sentence("GPGGA,\(clock),\(lat),\(ns),\(lon),\(ew),1,08,\(String(format: "%.4f", epoch.hdop)),12.5,M,0.0,M,,")
            } else {
                text += sentence("GPRMC,\(clock),V,,,,,,,\(date),,,N")
                text += sentence("GPGGA,\(clock),,,,,0,00,99.99,,,,,,")
            }
        }
        return text
    }

    private static func minutes(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String) {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        return (String(format: "%0\(degreeDigits)d%09.6f", degrees, minutes), value >= 0 ? positive : negative)
    }

    private static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }

    /// The processes `pid` started (gpsfake's gpsd).
    private static func children(of pid: pid_t) -> [pid_t] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { pid_t($0) }
    }
}

/// A client of gpsd of the test's own, watching as the daemon does: it counts the TPV
/// reports with a fix that gpsd sent, so a test knows how far the drive has got.
final class GPSDWatcher {
    private let fd: Int32
    /// The count the reader thread adds to (a box: an `Atomic` cannot be captured by itself).
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private let fixes = Counter()
    private let done = DispatchGroup()

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw UnixSocketError("cannot connect to gpsd on \(port)")
        }
        let watch = #"?WATCH={"enable":true,"json":true};"# + "\n"
        _ = watch.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        let (descriptor, counter, group) = (fd, fixes, done)
        group.enter()
        Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 8_192)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                pending += buffer[0..<count]
                // By bytes: gpsd ends its lines with "\r\n", one Character to a String search.
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    if line.contains(#""class":"TPV""#) && (line.contains(#""mode":2"#) || line.contains(#""mode":3"#)) {
                        counter.value.add(1, ordering: .relaxed)
                    }
                    pending.removeSubrange(...newline)
                }
            }
            group.leave()
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        _ = done.wait(timeout: .now() + 5)
        close(fd)
    }

    /// TPVs with a fix gpsd has sent this client.
    var fixCount: Int { fixes.value.load(ordering: .relaxed) }
}

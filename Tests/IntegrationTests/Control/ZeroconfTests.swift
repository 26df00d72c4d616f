import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Zeroconf as mpd has it: while a TCP listener is open, `_mpd._tcp` is published on
/// its port through Avahi under `--zeroconf-name`, and withdrawn when the daemon stops; Avahi
/// restarting gets it published again, a name taken gets Avahi's alternative, `--no-zeroconf`
/// publishes nothing, and without Avahi the daemon runs as ever. Against a real avahi-daemon
/// on a private system bus that sees only a loopback interface (``AvahiServer``: nothing is
/// sent beyond this machine), seen with `avahi-browse -rpt _mpd._tcp`, as a client sees it.
@Suite(.serialized) struct ZeroconfTests {
    /// One Avahi for the suite (started by the first test that needs it).
    static let avahi = Result { try AvahiServer() }

    /// A daemon with `--bind 127.0.0.1:0` on `bus`, logging at debug level; its TCP port as it logs it.
    final class Daemon {
        let control: ControlDaemon
        let port: Int

        init(bus: String, _ extra: [String]) throws {
            let control = try ControlDaemon(["--music-directory", TestMedia.directory.path, "--no-state", "--bind", "127.0.0.1:0"] + extra,
                                            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus, "QUEUEPLAYERD_LOG_LEVEL": "debug"])
            self.control = control
            var found: Int?
            _ = waitUntil(timeout: 10) {
                found = NetworkProbe.port(in: control.process.standardError, after: "control socket: 127.0.0.1:")
                return found != nil
            }
            guard let found else {
                control.stop()
                throw UnixSocketError("the daemon named no TCP listener within 10 s; stderr: \(control.process.standardError)")
            }
            port = found
        }

        var log: String { control.process.standardError }
        /// The log's lines that say `zeroconf:`.
        var zeroconfLines: [String] { log.split(separator: "\n").map(String.init).filter { $0.contains("zeroconf:") } }

        /// Whether libavahi-client is mapped into the daemon (it is loaded when the daemon
        /// first publishes, not linked: the launch).
        var hasLoadedAvahi: Bool {
            // Read to the end: a /proc file says it is empty, and a whole read of it stops short.
            let maps = FileHandle(forReadingAtPath: "/proc/\(control.process.processIdentifier)/maps").flatMap { try? $0.readToEnd() }
            return String(decoding: maps ?? Data(), as: UTF8.self).contains("/libavahi-client.so")
        }

        /// SIGTERM, and the exit status.
        func stop() -> Int32? {
            control.process.send(SIGTERM)
            let status = control.process.wait(timeout: 15)
            control.stop()
            return status
        }
    }

    /// This machine's name, as `%h` gives it.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, 255)
        return String(cString: buffer)
    }()

    /// Waits until `avahi-browse` lists what `condition` looks for; the last listing either way.
    static func browse(_ avahi: AvahiServer, timeout: Double = 20,
                       until condition: ([(interface: String, name: String, port: Int)]) -> Bool) throws
        -> (found: Bool, services: [(interface: String, name: String, port: Int)]) {
        var services: [(interface: String, name: String, port: Int)] = []
        var failure: Error?
        let found = waitUntil(timeout: timeout) {
            do { services = try avahi.browse() } catch { failure = error; return true }
            return condition(services)
        }
        if let failure { throw failure }
        return (found, services)
    }

    @Test func theServiceIsPublishedOnTheTCPPortUnderItsNameAndWithdrawnWhenTheDaemonStops() throws {
        let avahi = try Self.avahi.get()
        let daemon = try Daemon(bus: avahi.busAddress, ["--zeroconf-name", "qp test @ %h"])
        let name = "qp test @ \(Self.hostName)"
        let published = try Self.browse(avahi) { $0.contains { $0.name == name } }
        #expect(published.found, "not published: \(published.services); log: \(daemon.log)")
        let entries = published.services.filter { $0.name == name }
        #expect(entries.count == 1 && entries.first?.port == daemon.port && entries.first?.interface == "lo", "\(entries)")
        #expect(daemon.zeroconfLines.contains { $0.contains("zeroconf: published \"\(name)\" (_mpd._tcp, port \(daemon.port)") },
                "\(daemon.zeroconfLines)")
        // It is the daemon's port: an MPD client reaches it there.
        let status = try ToolRun.run("/usr/bin/mpc", ["-h", "127.0.0.1", "-p", String(entries.first?.port ?? 0), "status"], timeout: 10)
        #expect(status.status == 0, "\(status)")

        #expect(daemon.stop() == 0)
        #expect(daemon.zeroconfLines.contains { $0.contains("zeroconf: \"\(name)\" withdrawn") }, "\(daemon.zeroconfLines)")
        let withdrawn = try Self.browse(avahi) { !$0.contains { $0.name == name } }
        #expect(withdrawn.found, "still listed after the daemon stopped: \(withdrawn.services)")
    }

    /// Of a loopback listener and one other machines reach, the second is announced, on
    /// every interface Avahi has (here, its namespace's loopback alone).
    @Test func theListenerOtherMachinesReachIsTheOneAnnounced() throws {
        let avahi = try Self.avahi.get()
        let daemon = try Daemon(bus: avahi.busAddress, ["--bind", "0.0.0.0:0", "--zeroconf-name", "qp wide"])
        defer { _ = daemon.stop() }
        let wide = try #require(NetworkProbe.port(in: daemon.log, after: "control socket: 0.0.0.0:"))
        #expect(wide != daemon.port)
        let published = try Self.browse(avahi) { $0.contains { $0.name == "qp wide" } }
        #expect(published.found, "\(published.services); log: \(daemon.log)")
        #expect(published.services.filter { $0.name == "qp wide" }.map(\.port) == [wide], "\(published.services)")
        #expect(daemon.zeroconfLines.contains { $0.hasSuffix("zeroconf: published \"qp wide\" (_mpd._tcp, port \(wide))") },
                "\(daemon.zeroconfLines)")
    }

    @Test func noZeroconfPublishesNothing() throws {
        let avahi = try Self.avahi.get()
        let quiet = try Daemon(bus: avahi.busAddress, ["--no-zeroconf", "--zeroconf-name", "qp quiet"])
        defer { _ = quiet.stop() }
        // A daemon started after it, that publishes: once it is listed, the first had its chance.
        let loud = try Daemon(bus: avahi.busAddress, ["--zeroconf-name", "qp loud"])
        defer { _ = loud.stop() }
        let listed = try Self.browse(avahi) { $0.contains { $0.name == "qp loud" } }
        #expect(listed.found, "\(listed.services); log: \(loud.log)")
        #expect(!listed.services.contains { $0.name == "qp quiet" || $0.port == quiet.port }, "\(listed.services)")
        #expect(quiet.zeroconfLines.isEmpty, "\(quiet.zeroconfLines)")
        // libavahi-client is loaded by the daemon that publishes, and never by the other.
        #expect(loud.hasLoadedAvahi)
        #expect(!quiet.hasLoadedAvahi)
    }

    @Test func aNameTakenOnTheNetworkGetsAvahisAlternative() throws {
        let avahi = try Self.avahi.get()
        let other = try ChildProcess(program: "/usr/bin/avahi-publish", ["-s", "qp clash", "_mpd._tcp", "1"],
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": avahi.busAddress])
        defer { other.terminate() }
        let taken = try Self.browse(avahi) { $0.contains { $0.name == "qp clash" && $0.port == 1 } }
        try #require(taken.found, "avahi-publish did not publish: \(taken.services) \(other.standardError)")

        let daemon = try Daemon(bus: avahi.busAddress, ["--zeroconf-name", "qp clash"])
        defer { _ = daemon.stop() }
        let renamed = try Self.browse(avahi) { $0.contains { $0.name == "qp clash #2" } }
        #expect(renamed.found, "\(renamed.services); log: \(daemon.log)")
        #expect(renamed.services.filter { $0.name == "qp clash #2" }.map(\.port) == [daemon.port])
        #expect(renamed.services.filter { $0.name == "qp clash" }.map(\.port) == [1], "the other service keeps its name")
        #expect(daemon.zeroconfLines.contains { $0.contains("the name \"qp clash\" is taken on the network; publishing as \"qp clash #2\"") },
                "\(daemon.zeroconfLines)")
    }

    @Test func avahiRestartingGetsTheServicePublishedAgain() throws {
        let avahi = try Self.avahi.get()
        let daemon = try Daemon(bus: avahi.busAddress, ["--zeroconf-name", "qp restart"])
        defer { _ = daemon.stop() }
        let first = try Self.browse(avahi) { $0.contains { $0.name == "qp restart" } }
        try #require(first.found, "\(first.services); log: \(daemon.log)")

        avahi.stopAvahi()
        #expect(waitUntil(timeout: 10) { daemon.zeroconfLines.contains { $0.contains("Avahi went away") } }, "\(daemon.zeroconfLines)")
        try avahi.startAvahi()
        let again = try Self.browse(avahi) { $0.contains { $0.name == "qp restart" } }
        #expect(again.found, "not published again: \(again.services); log: \(daemon.log)")
        #expect(again.services.filter { $0.name == "qp restart" }.map(\.port) == [daemon.port])
        #expect(daemon.zeroconfLines.filter { $0.contains("zeroconf: published \"qp restart\"") }.count == 2, "\(daemon.zeroconfLines)")
    }

    /// No Avahi on the bus, then no bus at all: one debug line each time, and the daemon serves
    /// and stops as ever. Avahi starting later on that bus gets the service published.
    @Test func withoutAvahiTheDaemonRunsNormally() throws {
        let bare = try AvahiServer(withAvahi: false)
        let waiting = try Daemon(bus: bare.busAddress, ["--zeroconf-name", "qp late"])
        defer { _ = waiting.stop() }
        let status = try ToolRun.run("/usr/bin/mpc", ["-h", "127.0.0.1", "-p", String(waiting.port), "status"], timeout: 10)
        #expect(status.status == 0, "\(status)")
        #expect(waitUntil(timeout: 10) { !waiting.zeroconfLines.isEmpty })
        #expect(waiting.zeroconfLines.count == 1 && waiting.zeroconfLines.first?.contains("Avahi is not running") == true,
                "\(waiting.zeroconfLines)")
        try bare.startAvahi()
        let late = try Self.browse(bare) { $0.contains { $0.name == "qp late" } }
        #expect(late.found, "not published once Avahi started: \(late.services); log: \(waiting.log)")

        let scratch = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let alone = try Daemon(bus: "unix:path=\(scratch.path)/no-bus", [])
        let reply = try ToolRun.run("/usr/bin/mpc", ["-h", "127.0.0.1", "-p", String(alone.port), "status"], timeout: 10)
        #expect(reply.status == 0, "\(reply)")
        #expect(waitUntil(timeout: 10) { !alone.zeroconfLines.isEmpty })
        #expect(alone.zeroconfLines.count == 1 && alone.zeroconfLines.first?.contains("Avahi cannot be reached") == true,
                "\(alone.zeroconfLines)")
        #expect(alone.stop() == 0)
        #expect(alone.zeroconfLines.count == 1, "nothing more at shutdown: \(alone.zeroconfLines)")
    }
}

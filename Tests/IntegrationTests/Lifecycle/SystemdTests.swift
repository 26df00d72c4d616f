import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The daemon as a systemd user service, without a running systemd: the units are checked
/// by `systemd-analyze verify`, the service manager's side of sd_notify is a datagram socket
/// the test owns, and the journal's side of stderr is `$JOURNAL_STREAM`.
@Suite(.serialized) struct SystemdTests {
    @Test func systemdAnalyzeVerifiesBothUnits() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let units = TestMedia.repository.appendingPathComponent("systemd")
        // verify insists that ExecStart= names an executable: the copy points at the built daemon.
        let service = try String(contentsOf: units.appendingPathComponent("queueplayerd.service"), encoding: .utf8)
        // One option only (the web page on loopback): any other would win over the configuration
        // file, which the unit points at.
        #expect(service.contains("\nExecStart=%h/.local/bin/queueplayerd --http 127.0.0.1:6680\n"))
        #expect(service.contains("%E/queueplayerd/queueplayerd.toml"))
        try service.replacingOccurrences(of: "ExecStart=%h/.local/bin/queueplayerd", with: "ExecStart=\(ChildProcess.daemonPath)")
            .write(to: directory.appendingPathComponent("queueplayerd.service"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(at: units.appendingPathComponent("queueplayerd.socket"),
                                        to: directory.appendingPathComponent("queueplayerd.socket"))

        let verify = try Self.verifyUnits(in: directory)
        #expect(verify.wait(timeout: 60) == 0, "\(verify.standardError)")
        // verify exits 0 on unknown keys and bad values too, but says so: it must say nothing.
        #expect(verify.standardError.isEmpty, "\(verify.standardError)")
        #expect(verify.lines.isEmpty, "\(verify.lines.map(\.text))")

        let socketUnit = try String(contentsOf: units.appendingPathComponent("queueplayerd.socket"), encoding: .utf8)
        for line in ["ListenStream=%t/queueplayerd.sock", "SocketMode=0600", "WantedBy=sockets.target"] {
            #expect(socketUnit.contains("\n\(line)\n"), "queueplayerd.socket: \(line)")
        }
        for line in ["Type=notify", "WatchdogSec=10s", "Restart=on-failure", "NoNewPrivileges=yes",
                     "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "WantedBy=default.target", "Also=queueplayerd.socket"] {
            #expect(service.contains("\n\(line)\n"), "queueplayerd.service: \(line)")
        }
    }

    /// What the units' comments tell a user to put in a drop-in (an indented block holding a
    /// `[Section]` or a `Key=value`) is verified too, added to the unit as the drop-in would be:
    /// systemd rejects a comment after a value, and verify says so.
    @Test func documentedDropInExamplesVerify() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let units = TestMedia.repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("queueplayerd.service"), encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=%h/.local/bin/queueplayerd", with: "ExecStart=\(ChildProcess.daemonPath)")
        let socket = try String(contentsOf: units.appendingPathComponent("queueplayerd.socket"), encoding: .utf8)
        let serviceExamples = Self.dropInExamples(in: service, section: "Service")
        let socketExamples = Self.dropInExamples(in: socket, section: "Socket")
        #expect(serviceExamples.contains { $0.contains("\nPrivateTmp=no") }, "\(serviceExamples)")
        #expect(socketExamples.contains { $0.contains("\nListenStream=6600") }, "\(socketExamples)")

        for (name, unit, examples) in [("queueplayerd.service", service, serviceExamples),
                                       ("queueplayerd.socket", socket, socketExamples)] {
            for example in examples {
                try service.write(to: directory.appendingPathComponent("queueplayerd.service"), atomically: true, encoding: .utf8)
                try socket.write(to: directory.appendingPathComponent("queueplayerd.socket"), atomically: true, encoding: .utf8)
                try (unit + "\n" + example).write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
                let verify = try Self.verifyUnits(in: directory)
                #expect(verify.wait(timeout: 60) == 0, "\(name) with \(example): \(verify.standardError)")
                #expect(verify.standardError.isEmpty, "\(name) with \(example): \(verify.standardError)")
            }
        }
    }

    /// `systemd-analyze --user verify` of both units in `directory` (started; wait for it).
    static func verifyUnits(in directory: URL) throws -> ChildProcess {
        // With no user manager running, `--user` needs a runtime directory to resolve %t.
        try ChildProcess(
            program: "/usr/bin/systemd-analyze",
            ["--user", "verify", directory.appendingPathComponent("queueplayerd.socket").path,
             directory.appendingPathComponent("queueplayerd.service").path],
            environment: ["XDG_RUNTIME_DIR": directory.path, "SYSTEMD_LOG_COLOR": "0"])
    }

    /// The drop-in examples of a unit's comments: each block of lines indented under `#`
    /// that holds a `[Section]` or a `Key=value` line, as a drop-in's text (under `[section]`
    /// when the block names none). Shell command blocks (`make install`, `MPD_HOST=... mpc`)
    /// hold neither and are left out.
    static func dropInExamples(in unit: String, section: String) -> [String] {
        var blocks: [[String]] = [[]]
        for line in unit.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#   ") {
                blocks[blocks.count - 1].append(String(line.dropFirst(4)))
            } else if !blocks[blocks.count - 1].isEmpty {
                blocks.append([])
            }
        }
        let isUnitLine = { (line: String) in
            line.range(of: #"^(\[[A-Za-z]+\]|[A-Z][A-Za-z]*=.*)$"#, options: .regularExpression) != nil
        }
        return blocks.filter { $0.contains(where: isUnitLine) }.map { block in
            (block.first?.hasPrefix("[") == true ? [] : ["[\(section)]"]) + block
        }.map { $0.joined(separator: "\n") + "\n" }
    }

    /// READY=1 once the control socket accepts, STATUS= with the item, WATCHDOG=1 every half
    /// of WATCHDOG_USEC, STOPPING=1 on SIGTERM, then exit 0.
    @Test func notifiesReadinessStatusWatchdogAndStopping() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(path: directory.appendingPathComponent("notify").path)
        let control = directory.appendingPathComponent("x.sock").path
        let daemon = try ChildProcess(["--media", TestMedia.directory.path, "--output", "null", "--socket", control],
                                      environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
        defer { daemon.terminate() }

        let ready = try #require(notify.waitFor(timeout: 10) { $0 == "READY=1" }, "stderr: \(daemon.standardError)")
        // Ready means serving: the control socket accepts and greets at once.
        let client = try UnixSocketClient(path: control)
        #expect(try client.readLine()?.hasPrefix("OK MPD ") == true)
        client.close()

        let window = notify.collect(for: 1.5)
        let messages = ready.before + window
        let first = try #require(TestMedia.all.first).lastPathComponent
        #expect(messages.contains { $0.text == "STATUS=Playing \(first)" }, "\(messages.map(\.text))")
        #expect(messages.allSatisfy { !$0.text.contains("STOPPING") })

        // About every 100 ms: a 1.5 s window holds about 15 pings, none far apart.
        let pings = window.filter { $0.text == "WATCHDOG=1" }.map(\.time)
        #expect((10...18).contains(pings.count), "\(pings.count) pings in 1.5 s")
        let gaps = zip(pings, pings.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 < 0.35 }, "gaps: \(gaps)")
        if !gaps.isEmpty {
            let mean = gaps.reduce(0, +) / Double(gaps.count)
            #expect(abs(mean - 0.1) < 0.03, "mean gap \(mean) s")
        }

        daemon.send(SIGTERM)
        let stopping = notify.waitFor(timeout: 5) { $0.split(separator: "\n").contains("STOPPING=1") }
        #expect(stopping != nil, "stderr: \(daemon.standardError)")
        #expect(daemon.wait(timeout: 10) == 0, "stderr: \(daemon.standardError)")
    }

    /// An abstract `@name` address works too; a watchdog meant for another process
    /// (`WATCHDOG_PID`) is not pinged; without `$NOTIFY_SOCKET` nothing changes.
    @Test func abstractAddressAndAWatchdogForAnotherProcess() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(path: "@queueplayerd-test-\(UUID().uuidString)")
        let daemon = try ChildProcess(["--music-directory", TestMedia.directory.path, "--output", "null",
                                       "--socket", directory.appendingPathComponent("x.sock").path],
                                      environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000",
                                                    "WATCHDOG_PID": "1"])
        defer { daemon.terminate() }
        let ready = try #require(notify.waitFor(timeout: 10) { $0 == "READY=1" }, "stderr: \(daemon.standardError)")
        let messages = ready.before + notify.collect(for: 0.6)
        #expect(messages.contains { $0.text == "STATUS=Stopped" }, "\(messages.map(\.text))")
        #expect(!messages.contains { $0.text == "WATCHDOG=1" }, "\(messages.map(\.text))")
        daemon.send(SIGINT)
        #expect(notify.waitFor(timeout: 5) { $0.hasPrefix("STOPPING=1") } != nil)
        #expect(daemon.wait(timeout: 10) == 0)
    }

    /// Under systemd (`$JOURNAL_STREAM` is stderr) every log line carries its sd-daemon
    /// priority; otherwise the usual format stays.
    @Test func logLinesCarryJournalPrioritiesOnlyWhenStderrIsTheJournal() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = directory.appendingPathComponent("not-audio.mp3")
        try "this is not an MP3 file\n".write(to: bad, atomically: true, encoding: .utf8)
        let arguments = ["--output", "null", "--socket", directory.appendingPathComponent("x.sock").path, bad.path]

        // What systemd does: JOURNAL_STREAM names the device and inode of the stream on stderr.
        let journal = try ChildProcess(
            program: "/bin/sh",
            ["-c", #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@""#, ChildProcess.daemonPath] + arguments)
        defer { journal.terminate() }
        #expect(waitUntil(timeout: 10) { journal.standardError.contains("<3>cannot play: ") }, "\(journal.standardError)")
        journal.send(SIGTERM)
        #expect(journal.wait(timeout: 10) == 0)
        let lines = journal.standardError.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>control socket: ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<6>stopping") }, "\(lines)")
        #expect(lines.allSatisfy { $0.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil }, "\(lines)")

        // A JOURNAL_STREAM inherited by a process whose stderr goes elsewhere is ignored.
        let plain = try ChildProcess(arguments, environment: ["JOURNAL_STREAM": "0:0"])
        defer { plain.terminate() }
        #expect(waitUntil(timeout: 10) { plain.standardError.contains("cannot play: ") }, "\(plain.standardError)")
        plain.terminate()
        #expect(plain.standardError.contains(" error "), "\(plain.standardError)")
        #expect(!plain.standardError.contains("<3>") && !plain.standardError.contains("<6>"), "\(plain.standardError)")
    }

    /// `make install` with a prebuilt binary: the daemon and both units, the unit's
    /// ExecStart= pointing at the installed binary, the shell completions, the man pages (those
    /// docs/man holds), the documentation with the licence and the example configuration;
    /// `make uninstall` removes every file it installed.
    @Test func makeInstallInstallsTheBinaryAndBothUnits() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("root").path
        let variables = ["BINARY=\(ChildProcess.daemonPath)", "DESTDIR=\(destination)", "PREFIX=/usr/local",
                         "UNITDIR=/usr/lib/systemd/user"]
        let install = try ChildProcess(program: "/usr/bin/make", ["-C", TestMedia.repository.path, "install"] + variables)
        #expect(install.wait(timeout: 60) == 0, "\(install.standardError)")

        let binary = destination + "/usr/local/bin/queueplayerd"
        let units = destination + "/usr/lib/systemd/user"
        #expect(FileManager.default.isExecutableFile(atPath: binary))
        let service = try String(contentsOfFile: units + "/queueplayerd.service", encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/local/bin/queueplayerd --http 127.0.0.1:6680\n"), "\(service)")
        let socket = try String(contentsOfFile: units + "/queueplayerd.socket", encoding: .utf8)
        #expect(socket == (try String(contentsOf: TestMedia.repository.appendingPathComponent("systemd/queueplayerd.socket"), encoding: .utf8)))
        for path in [units + "/queueplayerd.service", units + "/queueplayerd.socket"] {
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            #expect(mode == 0o644, "\(path): \(String(mode, radix: 8))")
        }

        let help = try ChildProcess(program: binary, ["--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.lines.contains { $0.text.contains("--output") })

        // The completions, each made from the installed binary for its shell.
        let share = destination + "/usr/local/share"
        for (path, marks) in [("/bash-completion/completions/queueplayerd", ["-F _queueplayerd queueplayerd", "--output"]),
                              ("/zsh/site-functions/_queueplayerd", ["#compdef queueplayerd", "--output"]),
                              ("/fish/vendor_completions.d/queueplayerd.fish", ["complete -c 'queueplayerd'", "-l 'output'"])] {
            let text = (try? String(contentsOfFile: share + path, encoding: .utf8)) ?? ""
            #expect(marks.allSatisfy(text.contains), "\(path): \(text.prefix(300))")
        }
        let pages = ((try? FileManager.default.contentsOfDirectory(atPath: TestMedia.repository.appendingPathComponent("docs/man").path)) ?? [])
            .filter { $0.firstMatch(of: /\.[1-8]$/) != nil }
        for page in pages {
            #expect(FileManager.default.fileExists(atPath: share + "/man/man\(page.split(separator: ".").last!)/\(page)"), "\(page)")
        }
        for path in ["README.md", "LICENSE", "docs/user-guide.md", "docs/licences.md", "examples/queueplayerd.toml"] {
            #expect(FileManager.default.fileExists(atPath: share + "/doc/queueplayerd/" + path), "\(path)")
        }

        let uninstall = try ChildProcess(program: "/usr/bin/make", ["-C", TestMedia.repository.path, "uninstall"] + variables)
        #expect(uninstall.wait(timeout: 60) == 0, "\(uninstall.standardError)")
        for path in [binary, units + "/queueplayerd.service", units + "/queueplayerd.socket"] {
            #expect(!FileManager.default.fileExists(atPath: path), "\(path) is left")
        }
        let left = FileManager.default.enumerator(atPath: destination)?.compactMap { $0 as? String }.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: destination + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        } ?? []
        #expect(left.isEmpty, "make uninstall left \(left)")
    }
}

/// The service manager's end of `$NOTIFY_SOCKET`: a Unix datagram socket bound to a path
/// or, for `@name`, to an abstract address.
private final class NotifySocket {
    struct Message {
        let text: String
        let time: Double
    }

    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw UnixSocketError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !isAbstract { raw[bytes.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (isAbstract ? 0 : 1))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw UnixSocketError("bind \(path): \(String(cString: strerror(error)))")
        }
    }

    deinit {
        close(fd)
        if !path.hasPrefix("@") { unlink(path) }
    }

    /// One datagram, or nil after `timeout` seconds.
    func receive(timeout: Double) -> Message? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(max(0, timeout) * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return Message(text: String(decoding: buffer[0..<count], as: UTF8.self), time: ChildProcess.now())
    }

    /// Receives until a datagram satisfies `predicate`; returns it and those before it.
    func waitFor(timeout: Double, _ predicate: (String) -> Bool) -> (message: Message, before: [Message])? {
        let deadline = ChildProcess.now() + timeout
        var before: [Message] = []
        while let message = receive(timeout: deadline - ChildProcess.now()) {
            if predicate(message.text) { return (message, before) }
            before.append(message)
        }
        return nil
    }

    /// Everything that arrives in the next `seconds`, each stamped as it arrives
    /// (read as it comes: the daemon's sends wait when the socket's queue is full).
    func collect(for seconds: Double) -> [Message] {
        let deadline = ChildProcess.now() + seconds
        var messages: [Message] = []
        while ChildProcess.now() < deadline {
            if let message = receive(timeout: deadline - ChildProcess.now()) { messages.append(message) }
        }
        return messages
    }
}

import Foundation
import Testing
import TestSupport

/// The configuration file seen from outside: the daemon does what the file says, a flag
/// overrides it, and a bad file stops it before it starts, naming the line.
@Suite struct ConfigurationFileDaemonTests {
    /// A scratch directory holding the file, removed when the test ends.
    final class Scratch {
        let directory: URL
        init() throws { directory = try TestMedia.scratchDirectory() }
        deinit { try? FileManager.default.removeItem(at: directory) }

        /// Writes `text` to `name` in the scratch directory and returns its path.
        func write(_ text: String, to name: String = "queueplayerd.toml") throws -> String {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
    }

    /// `once`, `files`, `output` and `no-state` from the file, read from its default place:
    /// the daemon plays the file's tone to the null output and exits 0, with no arguments at all.
    @Test func theDefaultFileIsReadAndItsSettingsTakeEffect() throws {
        let scratch = try Scratch()
        let tone = try TestMedia.makeTone(seconds: 0.3, in: scratch.directory, name: "from-file")
        let config = scratch.directory.appendingPathComponent("config")
        _ = try scratch.write("""
            # queueplayerd.toml
            once = true
            output = "null"
            files = ["../../\(tone.lastPathComponent)"]   # relative to this file's directory
            """, to: "config/queueplayerd/queueplayerd.toml")
        let daemon = try ChildProcess([], environment: ["XDG_CONFIG_HOME": config.path])
        defer { daemon.terminate() }
        #expect(daemon.wait(timeout: 30) == 0, "stderr: \(daemon.standardError)")
        #expect(daemon.lines.contains { $0.text == "Now playing: from-file.mp3" }, "\(daemon.lines.map(\.text))")
    }

    /// The file's socket is where the daemon listens; `--socket` moves it elsewhere.
    @Test func aFlagOverridesTheFile() throws {
        let scratch = try Scratch()
        let fromFile = scratch.directory.appendingPathComponent("file.sock").path
        let fromFlag = scratch.directory.appendingPathComponent("flag.sock").path
        let file = try scratch.write("""
            socket = "file.sock"
            output = "null"
            no-state = true
            music-directory = "\(TestMedia.directory.path)"
            """)
        let daemon = try ChildProcess(["--config", file])
        defer { daemon.terminate() }
        #expect(UnixSocketClient.waitUntilAccepting(fromFile, timeout: 10), "stderr: \(daemon.standardError)")
        daemon.terminate()
        try? FileManager.default.removeItem(atPath: fromFile)

        let overridden = try ChildProcess(["--config", file, "--socket", fromFlag])
        defer { overridden.terminate() }
        #expect(UnixSocketClient.waitUntilAccepting(fromFlag, timeout: 10), "stderr: \(overridden.standardError)")
        #expect(!FileManager.default.fileExists(atPath: fromFile), "the file's socket is not bound too")
    }

    /// A mistake in the file is a usage error (status 64) that names the file and the line;
    /// so is a file that `--config` names and that does not exist.
    @Test func aBadFileExitsWithItsLine() throws {
        let scratch = try Scratch()
        let file = try scratch.write("""
            # queueplayerd settings
            output = "null"

            music-directory = "\(TestMedia.directory.path)"
            bufer-time = 1000
            """)
        let daemon = try ChildProcess(["--config", file])
        #expect(daemon.wait(timeout: 10) == 64)
        #expect(daemon.standardError.contains("\(file):5: unknown setting 'bufer-time'"), "\(daemon.standardError)")

        let range = try scratch.write("buffer-time = 50\n", to: "range.toml")
        let outOfRange = try ChildProcess(["--config", range, "--output", "null", "--no-state"])
        #expect(outOfRange.wait(timeout: 10) == 64)
        #expect(outOfRange.standardError.contains("\(range):1: buffer-time: give a number of milliseconds from 100 to 5000."),
                "\(outOfRange.standardError)")

        let missing = scratch.directory.appendingPathComponent("missing.toml").path
        let absent = try ChildProcess(["--config", missing, "--output", "null", "--no-state"])
        #expect(absent.wait(timeout: 10) == 64)
        #expect(absent.standardError.contains("\(missing): no such file"), "\(absent.standardError)")
    }

    /// Every option `--help` lists is a key of the file: an inline table, a type no setting
    /// takes, is refused as the wrong type, never as an unknown setting.
    @Test func everyOptionOfTheHelpIsASetting() throws {
        let help = try ChildProcess(["--help"])
        #expect(help.wait(timeout: 10) == 0)
        let text = help.lines.map(\.text).joined(separator: "\n")
        #expect(text.contains("--config <PATH>") && text.contains("queueplayerd.toml"))
        let named = Set(text.matches(of: /(?:^|\s|\/)--([a-z][a-z-]+)/).map { String($0.output.1) })
        // A flag's inversion (`--no-auto-enqueue`, `--no-zeroconf`) is its key set to false.
        let options = named.filter { !($0.hasPrefix("no-") && named.contains(String($0.dropFirst(3)))) }
            .subtracting(["help", "version", "config"])
        #expect(options.contains("zeroconf") && !options.contains("no-zeroconf") && options.contains("no-state"))
        #expect(options.count >= 16, "\(options.sorted())")
        let scratch = try Scratch()
        for option in options.sorted() + ["files"] {
            let file = try scratch.write("\(option) = {}\n", to: "\(option).toml")
            let daemon = try ChildProcess(["--config", file])
            #expect(daemon.wait(timeout: 10) == 64, "\(option)")
            #expect(daemon.standardError.contains("\(file):1: \(option): expected"), "\(option): \(daemon.standardError)")
        }
    }
}

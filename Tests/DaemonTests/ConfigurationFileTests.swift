import Foundation
import MPDProtocol
import Testing
import TestSupport
@testable import DaemonCore

/// The configuration file (`queueplayerd.toml`): every option by its name, a mistake reported
/// at its line, and the command line winning over the file.
@Suite struct ConfigurationFileTests {
    /// The file the tests' texts pretend to come from; its directory anchors relative paths.
    static let path = "/etc/xdg/queueplayerd/queueplayerd.toml"

    static func read(_ text: String) throws(ConfigurationFileError) -> ConfigurationFile {
        try ConfigurationFile(path: path, text: text)
    }

    /// The error reading `text` gives, or nil when it reads.
    static func error(_ text: String) -> ConfigurationFileError? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error
        }
    }

    /// The options `commandLine` gives over the file of `text`, or the message refusing them.
    static func options(_ text: String, commandLine: DaemonSettings = DaemonSettings()) throws -> Result<DaemonOptions, DaemonOptionError> {
        let file = try read(text)
        return Result { () throws(DaemonOptionError) in try commandLine.options(over: file) }
    }

    @Test func everyKeyMapsToItsOption() throws {
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let text = """
            # Every setting but media and files, which exclude music-directory.
            music-directory = "\(music.path)"
            socket = "/run/user/1000/mpd.sock"
            output = ["alsa:hw:1", "fifo:/tmp/snapfifo?format=48000:16:2"]
            buffer-time = 1500
            replaygain = "auto"
            replaygain-preamp = 3.5
            replaygain-missing-preamp = -6
            replaygain-limit = false
            loudness-target = -16
            once = true
            background-modes = "none"
            background-time = 60
            no-state = true
            feed = ["https://example.com/a.xml", "http://example.org/b.rss"]
            fetch-interval = 900.5
            auto-enqueue = false
            download-limit = 3
            min-free-space = 1_000_000
            max-download-size = 5000000000
            fetch-timeout = 12.5
            stream-retry-time = 45
            ca-file = "private-ca.pem"
            max-clients = 7
            connection-timeout = 2.5
            bind = ["/run/user/1000/other.sock", "192.168.1.10:6601", "[::1]", "any"]
            password = ["s3cr@t@read,control", "guest@read"]
            default-permissions = "read"
            local-permissions = "read,add"
            http = "127.0.0.1:6680"
            http-token-file = "token"
            location = "gpsd:127.0.0.1:2948"
            regions = "tour.gpx"
            sticker-file = "sticker.sql"
            zeroconf = false
            zeroconf-name = "Living room @ %h"
            resume-rewind = 5
            statistics = "client"
            rate = 1.5
            pitch-algorithm = "varispeed"
            skip-silence = true
            """
        let file = try Self.read(text)
        #expect(Set(file.lines.keys) == Set(Settings.all.map(\.name)).subtracting(["media", "files"]))
        #expect(file.lines["music-directory"] == 2 && file.lines["fetch-timeout"] == 21)
        let options = try DaemonSettings().options(over: file)
        #expect(options.musicDirectory == music.path)
        #expect(options.media == nil && options.files.isEmpty)
        #expect(options.socket == "/run/user/1000/mpd.sock")
        #expect(options.outputs == [.alsa(device: "hw:1"), OutputChoice(argument: "fifo:/tmp/snapfifo?format=48000:16:2")])
        #expect(options.bufferTimeMilliseconds == 1500)
        #expect(options.loudness.mode == .auto && options.loudness.preamp == 3.5 && options.loudness.missingPreamp == -6)
        #expect(!options.loudness.limit && options.loudness.target == -16)
        #expect(options.once && options.noState && !options.autoEnqueue)
        #expect(options.backgroundMode == .none)
        #expect(options.backgroundTime == 60)
        #expect(options.feeds.map(\.absoluteString) == ["https://example.com/a.xml", "http://example.org/b.rss"])
        #expect(options.fetchInterval == 900.5)
        #expect(options.downloadLimit == 3)
        #expect(options.minFreeSpace == 1_000_000)
        #expect(options.maxDownloadSize == 5_000_000_000)
        #expect(options.fetchTimeout == 12.5)
        #expect(options.streamRetryTime == 45)
        #expect(options.caFile == "/etc/xdg/queueplayerd/private-ca.pem", "a relative path is the file's directory's")
        #expect(options.maxClients == 7)
        #expect(options.connectionTimeout == 2.5)
        #expect(options.http?.description == "127.0.0.1:6680")
        #expect(options.location == LocationChoice(host: "127.0.0.1", port: 2948))
        #expect(options.regions?.hasSuffix("/tour.gpx") == true)
        #expect(options.stickerFile == .file("/etc/xdg/queueplayerd/sticker.sql"), "a relative path is the file's directory's")
        #expect(options.resumeRewind == 5 && !options.statisticsByDaemon)
        #expect(options.binds == [.unix("/run/user/1000/other.sock"), .tcp(host: "192.168.1.10", port: 6601),
                                  .tcp(host: "::1", port: 6600), .tcp(host: "any", port: 6600)])
        #expect(options.passwords == [PasswordSetting(secret: "s3cr@t", permissions: [.read, .control, .player]),
                                      PasswordSetting(secret: "guest", permissions: .read)])
        #expect(options.defaultPermissions == .read && options.localPermissions == [.read, .add])
        #expect(!options.zeroconf && options.zeroconfName == "Living room @ %h")

        let media = try Self.read("media = \"\(music.path)\"")
        #expect(try DaemonSettings().options(over: media).media == music.path)
        let files = try Self.read("files = [\"/a.mp3\", \"b.mp3\"]\nfetch-interval = \"never\"")
        let fileOptions = try DaemonSettings().options(over: files)
        #expect(fileOptions.files == ["/a.mp3", "/etc/xdg/queueplayerd/b.mp3"], "a relative path is the file's directory's")
        #expect(fileOptions.fetchInterval == nil)
    }

    /// The example configuration (docs/examples/queueplayerd.toml, installed with the docs)
    /// reads, and names every setting (some commented out).
    @Test func theExampleConfigurationNamesEverySetting() throws {
        let example = try String(contentsOf: TestMedia.repository.appendingPathComponent("docs/examples/queueplayerd.toml"),
                                 encoding: .utf8)
        let file = try ConfigurationFile(path: Self.path, text: String(example), environment: ["HOME": "/home/me"])
        #expect(file.settings[\.musicDirectory] == "/home/me/Music", "~ is $HOME")
        #expect(file.settings[\.bufferTime] == DaemonOptions().bufferTimeMilliseconds)
        let uncommented = example.replacing(/(?m)^# ([a-z-]+ = )/) { "\($0.output.1)" }
        #expect(Set(try Self.read(String(uncommented)).lines.keys) == Set(Settings.all.map(\.name)))
    }

    /// `sticker-file`: a path, `off`, never empty; the default is beside the state.
    @Test func stickerFileTakesAPathOrOff() throws {
        #expect(try Self.options("sticker-file = \"off\"").get().stickerFile == .off)
        #expect(try Self.options("sticker-file = \"/var/lib/mpd/sticker.sql\"").get().stickerFile == .file("/var/lib/mpd/sticker.sql"))
        #expect(try Self.options("").get().stickerFile == .besideState)
        #expect(Self.error("sticker-file = \"\"")?.description.contains("give a file path or \"off\"") == true)
        #expect(Self.error("sticker-file = 3") != nil)
        // The command line's wins, and says off as the file does.
        var commandLine = DaemonSettings()
        commandLine[\.stickerFile] = StickerFileChoice(argument: "off")
        #expect(try Self.options("sticker-file = \"/x.sql\"", commandLine: commandLine).get().stickerFile == .off)
        commandLine[\.stickerFile] = StickerFileChoice(argument: "")
        #expect(throws: DaemonOptionError.self) { try Self.options("", commandLine: commandLine).get() }
        #expect(StickerFileChoice.besideState.file(stateDirectory: URL(fileURLWithPath: "/s"))?.path == "/s/sticker.sql")
        #expect(StickerFileChoice.off.file(stateDirectory: nil) == nil)
    }

    /// No file, or an empty one, leaves every default as it was.
    @Test func anEmptyFileChangesNothing() throws {
        let defaults = DaemonOptions()
        for file in [nil, try Self.read(""), try Self.read("# nothing\n\n")] {
            let options = try DaemonSettings().options(over: file)
            #expect(options.bufferTimeMilliseconds == defaults.bufferTimeMilliseconds)
            #expect(options.outputs.isEmpty && options.feeds.isEmpty && options.files.isEmpty)
            #expect(options.fetchInterval == defaults.fetchInterval && options.autoEnqueue && !options.once)
        }
    }

    /// A repeatable option takes an array, or one string for an array of one.
    @Test func arraysAndSingleStrings() throws {
        #expect(try Self.read("output = \"null\"").settings[\.output] == [.null])
        #expect(try Self.read("output = [\"auto\", \"null\"]").settings[\.output] == [.auto, .null])
        #expect(try Self.read("output = []").settings[\.output] == [])
        #expect(try Self.read("feed = \"https://example.com/f.xml\"").settings[\.feed] == ["https://example.com/f.xml"])
        #expect(try Self.read("files = \"/music/a.mp3\"").settings[\.files] == ["/music/a.mp3"])
        let multiline = try Self.read("""
            files = [
              "/music/a.mp3",  # first
              "/music/b.mp3",
            ]
            """)
        #expect(multiline.settings[\.files] == ["/music/a.mp3", "/music/b.mp3"])
    }

    @Test func anUnknownKeyIsReportedAtItsLine() throws {
        let text = """
            # queueplayerd settings

            music-directory = "/srv/music"
            output = [
              "auto",
            ]
            bufer-time = 1000
            """
        let error = try #require(Self.error(text))
        #expect(error.line == 7)
        #expect(error.description == "\(Self.path):7: unknown setting 'bufer-time'")
        // A table is no setting either, nor are its keys.
        #expect(Self.error("once = true\n[player]\nbuffer-time = 1000")?.description == "\(Self.path):2: unknown setting 'player'")
        // The command line's option, not a key of the file.
        #expect(Self.error("config = \"/x.toml\"")?.line == 1)
    }

    @Test(arguments: [
        ("buffer-time = \"500\"", "buffer-time: expected an integer, found a string"),
        ("buffer-time = 500.5", "buffer-time: expected an integer, found a floating-point number"),
        ("once = \"yes\"", "once: expected true or false, found a string"),
        ("output = 3", "output: expected a string or an array of strings, found an integer"),
        ("output = [\"auto\", 3]", "output: expected a string or an array of strings, found an integer"),
        ("feed = { url = \"https://example.com/f.xml\" }", "feed: expected a string or an array of strings, found a table"),
        ("media = [\"/srv/music\"]", "media: expected a string, found an array"),
        ("background-time = true", "background-time: expected a number, found a boolean"),
        ("fetch-interval = \"hourly\"", "fetch-interval: expected a number of seconds or \"never\", found a string"),
        ("fetch-interval = 0", "fetch-interval: give a number of seconds more than 0, or \"never\""),
        ("background-modes = \"fetch\"", "background-modes: 'fetch' is not a list of modes: give \"audio\", \"location\", \"audio,location\" or \"none\""),
        ("output = \"speakers\"", "output: 'speakers' is not an output: give auto, alsa, alsa:DEVICE, null, fifo:PATH, fifo:PATH?format=44100:16:2"),
        ("download-limit = 1979-05-27", "download-limit: expected an integer, found a date"),
        ("replaygain = \"loud\"", "replaygain: 'loud' is not a replay gain mode: give off, track, album, auto"),
        ("loudness-target = \"loud\"", "loudness-target: expected a number of LUFS or \"off\", found a string"),
        ("loudness-target = -3", "loudness-target: give a loudness target in LUFS from -40 to -5, or off"),
    ])
    func aValueOfTheWrongTypeIsReportedAtItsLine(line: String, problem: String) throws {
        let error = try #require(Self.error("# settings\nsocket = \"/tmp/s.sock\"\n\(line)\nno-state = true\n"))
        #expect(error.description == "\(Self.path):3: \(problem)")
    }

    /// Syntax errors come from TOMLKit (toml++), with their line.
    @Test(arguments: [
        ("buffer-time = = 5", 4),
        ("output = [\"auto\"", 4),
        ("buffer-time = 99999999999999999999", 4),
        ("once = true", 4), // a second once
        ("socket = \"/run/x.sock", 4),
    ])
    func aSyntaxErrorIsReportedAtItsLine(line: String, number: Int) throws {
        let error = try #require(Self.error("once = true\n\n# the next line is wrong\n\(line)\n"))
        #expect(error.line == number, "\(error)")
        #expect(error.description.hasPrefix("\(Self.path):\(number): "), "\(error)")
    }

    /// A key's line is where it starts, past comments, blank lines and multi-line values before it.
    @Test func keysAreFoundAtTheLineTheyStartOn() {
        let text = """
            # comment
            a = 1

            b = [
              1,
              2,
            ]
            # comment
            c = \"\"\"
            x
            \"\"\"
            d = { e = 1 }
            [f]
            g = 1
            [[h]]
            [[h]]
            """
        #expect(ConfigurationFile.keyLines(text) == ["a": 2, "b": 4, "c": 9, "d": 12, "f": 13, "h": 15])
        #expect(ConfigurationFile.keyLines("a = 1\r\nb = 2\r\n") == ["a": 1, "b": 2])
        #expect(ConfigurationFile.keyLines("").isEmpty)
    }

    @Test func theCommandLineWinsOverTheFile() throws {
        let file = try Self.read("""
            buffer-time = 2000
            output = ["alsa", "fifo:/tmp/snapfifo"]
            auto-enqueue = true
            once = true
            files = ["/music/a.mp3"]
            socket = "/tmp/from-file.sock"
            """)
        var commandLine = DaemonSettings()
        commandLine[\.bufferTime] = 1000
        commandLine[\.output] = [.null]
        commandLine[\.autoEnqueue] = false
        let options = try commandLine.options(over: file)
        #expect(options.bufferTimeMilliseconds == 1000)
        #expect(options.outputs == [.null], "an array is replaced, not added to")
        #expect(!options.autoEnqueue)
        #expect(options.once, "what the command line leaves out is the file's")
        #expect(options.socket == "/tmp/from-file.sock")
        #expect(options.files == ["/music/a.mp3"])

        // What to play is one choice: FILE arguments replace the file's files, and its
        // music-directory or media would be no conflict either.
        let music = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: music) }
        let playing = try Self.read("music-directory = \"\(music.path)\"")
        commandLine = DaemonSettings()
        commandLine[\.files] = ["/tmp/song.mp3"]
        let song = try commandLine.options(over: playing)
        #expect(song.files == ["/tmp/song.mp3"] && song.musicDirectory == nil)
        #expect(try DaemonSettings().options(over: playing).musicDirectory == music.path)
    }

    /// A value the file gives is checked as the option's, and the message names the file's line.
    @Test func aValueOutOfRangeNamesTheFileAndLine() throws {
        let text = "# range\nbuffer-time = 50\n"
        #expect(try Self.options(text).failure?.description
                == "\(Self.path):2: buffer-time: give a number of milliseconds from 100 to 5000.")
        var commandLine = DaemonSettings()
        commandLine[\.bufferTime] = 50
        #expect(try Self.options("", commandLine: commandLine).failure?.description
                == "--buffer-time: give a number of milliseconds from 100 to 5000.")
        // The same value from the command line is the command line's mistake, not the file's.
        #expect(try Self.options(text, commandLine: commandLine).failure?.description
                == "--buffer-time: give a number of milliseconds from 100 to 5000.")

        #expect(try Self.options("stream-retry-time = -1").failure?.description
                == "\(Self.path):1: stream-retry-time: give a number of seconds from 0 to 86400.")
        var retry = DaemonSettings()
        retry[\.streamRetryTime] = .infinity
        #expect(try Self.options("", commandLine: retry).failure?.description
                == "--stream-retry-time: give a number of seconds from 0 to 86400.")

        #expect(try Self.options("\n\nfeed = [\"https://example.com/a.xml\", \"ftp://example.com/b.xml\"]").failure?.description
                == "\(Self.path):3: feed: not an http or https URL: ftp://example.com/b.xml.")
        #expect(try Self.options("media = \"/nonexistent-directory\"").failure?.description
                == "\(Self.path):1: media: /nonexistent-directory: no such directory.")
        #expect(try Self.options("files = \"/a.mp3\"\nmedia = \"/tmp\"").failure?.description
                == "\(Self.path):2: media: give one of media, music-directory or files.")
        #expect(try Self.options("socket = \"\(String(repeating: "s", count: 101))\"").failure?.description
                == "\(Self.path):1: socket: a socket path must be 1 to 100 bytes long.")
    }

    /// The default file may be missing (no settings); a file named with `--config` may not.
    @Test func aMissingFileIsAnErrorOnlyWhenNamed() throws {
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["XDG_CONFIG_HOME": directory.path]
        let defaultPath = ConfigurationFile.defaultPath(environment: environment)
        #expect(defaultPath == directory.path + "/queueplayerd/queueplayerd.toml")
        #expect(try ConfigurationFile.load(path: nil, environment: environment) == nil)

        let missing = directory.appendingPathComponent("missing.toml").path
        #expect(throws: ConfigurationFileError(path: missing, line: nil, problem: "no such file")) {
            try ConfigurationFile.load(path: missing, environment: environment)
        }

        try FileManager.default.createDirectory(atPath: (defaultPath as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try "buffer-time = 1000\nsocket = \"~/queueplayerd.sock\"\n".write(toFile: defaultPath, atomically: true, encoding: .utf8)
        let file = try #require(try ConfigurationFile.load(path: nil, environment: environment))
        #expect(file.path == defaultPath && file.settings[\.bufferTime] == 1000)
        #expect(file.settings[\.socket] == NSString(string: "~/queueplayerd.sock").expandingTildeInPath)
        #expect(!(file.settings[\.socket] ?? "~").hasPrefix("~"))
        // An explicit empty file (`--config /dev/null`) is no settings, whatever the default file says.
        #expect(try ConfigurationFile.load(path: "/dev/null", environment: environment)?.settings.isEmpty == true)

        try Data([0x6f, 0x6e, 0x63, 0x65, 0x20, 0x3d, 0x20, 0xff]).write(to: URL(fileURLWithPath: missing))
        #expect(throws: ConfigurationFileError(path: missing, line: nil, problem: "not UTF-8 text")) {
            try ConfigurationFile.load(path: missing, environment: environment)
        }
    }

    /// The file is parsed once: the time to read it grows with its length, not its square. A list
    /// of 16,000 files against one of 4,000: a linear reading takes about 4 times the thread's CPU
    /// time (8 allowed for cache effects), a quadratic one 16; and the longer is read in well under
    /// 3 s of wall time. CPU time, not wall time: another process on the core does not stretch it.
    @Test func aLongFileIsReadInLinearTime() throws {
        func seconds(files count: Int) throws -> (cpu: Double, wall: Double) {
            let text = "once = true\nfiles = [\n" + (0..<count).map { "  \"/music/\($0).mp3\",\n" }.joined() + "]\nno-state = true\n"
            let (start, cpuStart) = (ChildProcess.now(), ThreadCPUTime.now())
            let file = try Self.read(text)
            let (wall, cpu) = (ChildProcess.now() - start, ThreadCPUTime.now() - cpuStart)
            #expect(file.settings[\.files]?.count == count && file.lines["no-state"] == count + 4)
            return (cpu, wall)
        }
        _ = try seconds(files: 100)
        // The best of three of each.
        let short = try (0..<3).map { _ in try seconds(files: 4_000).cpu }.min()!
        let long = try (0..<3).map { _ in try seconds(files: 16_000) }
        let longCPU = long.map(\.cpu).min()!, longWall = long.map(\.wall).min()!
        #expect(longWall < 3, "16,000 files read in \(longWall) s")
        #expect(longCPU / max(short, 0.005) < 8, "4,000 files in \(short) s of CPU, 16,000 in \(longCPU) s")
    }

    /// What is read is bounded: the size, the keys, the dotted parts of a key or table name and
    /// the nesting of values. Beyond each, an error naming the file (and the line), before TOMLKit
    /// sees the text (a header of many parts overflowed its stack; many keys, its memory).
    @Test func whatIsReadIsBounded() throws {
        let keys = (0..<2_000).map { "key\($0) = 1\n" }.joined()
        #expect(Self.error(keys)?.description == "\(Self.path):1001: more than 1000 keys, which is no configuration file")
        let tables = (0..<2_000).map { "[table\($0)]\n" }.joined()
        #expect(Self.error(tables)?.description == "\(Self.path):1001: more than 1000 keys, which is no configuration file")
        let header = "once = true\n[" + Array(repeating: "a", count: 100).joined(separator: ".") + "]\n"
        #expect(Self.error(header)?.description == "\(Self.path):2: a table name of more than 8 dotted parts")
        let hugeHeader = "[" + Array(repeating: "a", count: 400_000).joined(separator: ".") + "]\n"
        #expect(Self.error(hugeHeader)?.description == "\(Self.path):1: a table name of more than 8 dotted parts")
        let dotted = "\n\n" + Array(repeating: "\"a\"", count: 9).joined(separator: " . ") + " = 1\n"
        #expect(Self.error(dotted)?.description == "\(Self.path):3: a key of more than 8 dotted parts")
        let nested = "files = " + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "\n"
        #expect(Self.error(nested)?.description == "\(Self.path):1: arrays or inline tables nested more than 32 deep")
        // Within the bounds, nothing changes: eight parts are a table (no setting), 32 arrays an array.
        #expect(Self.error("a.b.c.d.e.f.g.h = 1")?.description == "\(Self.path):1: unknown setting 'a'")
        #expect(Self.error("files = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32))?.description
                == "\(Self.path):1: files: expected a string or an array of strings, found an array")

        let large = "# " + String(repeating: "x", count: ConfigurationFile.maximumSize) + "\n"
        #expect(Self.error(large) == ConfigurationFileError(path: Self.path, line: nil, problem: "larger than 1 MiB, which is no configuration file"))
        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("large.toml")
        try Data(large.utf8).write(to: file)
        #expect(throws: ConfigurationFileError(path: file.path, line: nil, problem: "larger than 1 MiB, which is no configuration file")) {
            try ConfigurationFile.load(path: file.path)
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

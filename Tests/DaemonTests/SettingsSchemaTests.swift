import Foundation
import Testing
import TestSupport
@testable import DaemonCore

/// The settings' one declaration (``Settings``) and what is made from it: the command line,
/// `--help`, the man pages, docs/settings.md and the example file.
@Suite struct SettingsSchemaTests {
    static func parse(_ arguments: [String]) -> Result<CommandLineRequest, CommandLineError> {
        SettingsCommandLine.parse(arguments)
    }

    /// The settings a command line gives, or the message refusing it.
    static func settings(_ arguments: [String]) throws -> DaemonSettings {
        guard case .run(_, let settings) = try parse(arguments).get() else {
            Issue.record("\(arguments) asks for no run")
            return DaemonSettings()
        }
        return settings
    }

    static func refusal(_ arguments: [String]) -> String? {
        if case .failure(let error) = parse(arguments) { return error.description }
        return nil
    }

    @Test func eachSettingIsDeclaredOnceAndCompletely() {
        let names = Settings.all.map(\.name)
        #expect(names.count == Set(names).count, "\(names)")
        #expect(names.count >= 32)
        let commands = Set(CommandOption.all.map(\.name))
        for setting in Settings.all {
            #expect(!commands.contains(setting.name), "\(setting.name) is a command option too")
            #expect(setting.name.wholeMatch(of: /[a-z][a-z-]*/) != nil, "\(setting.name)")
            #expect(!setting.summary.isEmpty && !setting.summary.hasSuffix(".") && !setting.manual.isEmpty, "\(setting.name)")
            #expect(setting.isFlag == setting.valueName.isEmpty, "\(setting.name): a value name exactly when it takes a value")
            #expect(!setting.inversion || setting.isFlag, "\(setting.name): only a flag has a --no- form")
            #expect(Settings.named(setting.name)?.name == setting.name)
        }
        #expect(Settings.all.filter(\.isPositional).map(\.name) == ["files"])
    }

    @Test func theCommandLineReadsEachKindOfSetting() throws {
        let settings = try Self.settings(["--buffer-time", "1000", "--output=null", "--output", "fifo:/tmp/f", "--once",
                                          "--no-zeroconf", "--auto-enqueue", "--fetch-interval", "never",
                                          "--background-time", "2.5", "a.mp3", "--", "--b.mp3"])
        #expect(settings[\.bufferTime] == 1000)
        #expect(settings[\.output] == [.null, OutputChoice(argument: "fifo:/tmp/f")!], "a list is the option given once per element")
        #expect(settings[\.once] == true && settings[\.zeroconf] == false && settings[\.autoEnqueue] == true)
        #expect(settings[\.noState] == nil, "a setting left out is nil, so that the file's applies")
        #expect(settings[\.fetchInterval] == .never)
        #expect(settings[\.backgroundTime] == 2.5)
        #expect(settings[\.files] == ["a.mp3", "--b.mp3"], "everything after -- is a FILE")
        // A single value given twice: the last one.
        #expect(try Self.settings(["--max-clients", "3", "--max-clients=4"])[\.maxClients] == 4)
    }

    /// A bare `--location` is gpsd's default, unless a gpsd value follows it.
    @Test func aBareLocationIsGpsdsDefault() throws {
        #expect(try Self.settings(["--location"])[\.location] == LocationChoice())
        let song = try Self.settings(["--location", "song.mp3"])
        #expect(song[\.location] == LocationChoice() && song[\.files] == ["song.mp3"])
        #expect(try Self.settings(["--location", "gpsd:host:99"])[\.location] == LocationChoice(host: "host", port: 99))
        #expect(Self.refusal(["--location", "gpsd:host:99999"])?.hasPrefix("--location: 'gpsd:host:99999' is not a location source") == true)
    }

    @Test func mistakesAreNamed() {
        #expect(Self.refusal(["--prot", "6600"]) == "Unknown option '--prot'")
        #expect(Self.refusal(["-x"]) == "Unknown option '-x'")
        #expect(Self.refusal(["--no-once"]) == "Unknown option '--no-once'", "once has no --no- form")
        #expect(Self.refusal(["--media"]) == "Missing value for '--media <DIR>'")
        #expect(Self.refusal(["--media", "--once"]) == "Missing value for '--media <DIR>'")
        #expect(Self.refusal(["--buffer-time", "half"]) == "--buffer-time: 'half' is not an integer.")
        #expect(Self.refusal(["--output", "speakers"])?.hasPrefix("--output: 'speakers' is not an output: give auto, alsa") == true)
        #expect(Self.refusal(["--once=yes"]) == "The option '--once' takes no value")
        // A negative number is a value (out of range later), not an option.
        #expect(throws: Never.self) { try Self.settings(["--background-time", "-1"]) }
    }

    @Test func helpVersionAndDocuments() throws {
        guard case .help = try Self.parse(["--media", "x", "--help"]).get() else { throw CommandLineError("no help") }
        guard case .help = try Self.parse(["-h"]).get() else { throw CommandLineError("no help") }
        guard case .version = try Self.parse(["--version"]).get() else { throw CommandLineError("no version") }
        guard case .document(.fileManual) = try Self.parse(["--print-document", "queueplayerd.toml.5"]).get() else {
            throw CommandLineError("no document")
        }
    }

    /// `--help` is a screen or two: one line an option (setting or not), none wider than 80
    /// columns, the explanations left to the man page.
    @Test func theHelpIsOneLineAnOption() {
        let lines = SettingsDocuments.help.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 100, "\(lines.count) lines")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
        for setting in Settings.all where !setting.isPositional {
            let option = "  --\(setting.name)"
            #expect(lines.filter { $0 == option || $0.hasPrefix(option + " ") || $0.hasPrefix(option + ",") }.count == 1,
                    "\(setting.name)")
        }
        #expect(!SettingsDocuments.help.contains("print-document"), "a hidden option stays hidden")
    }

    /// The committed documents are what the declarations make now: `make man` writes them.
    @Test(arguments: SettingsDocument.allCases)
    func theCommittedDocumentIsUpToDate(document: SettingsDocument) throws {
        let file = TestMedia.repository.appendingPathComponent(document.path)
        let committed = try String(contentsOf: file, encoding: .utf8)
        #expect(committed == document.text, "\(document.path) is stale: run `make man` and commit it")
    }

    /// Both man pages render with no warning (`groff -ww`, as `man -l` would render them); every
    /// setting has its entry in each.
    @Test(arguments: [SettingsDocument.manual, .fileManual])
    func theManPageRendersWithoutWarnings(document: SettingsDocument) throws {
        let path = TestMedia.repository.appendingPathComponent(document.path).path
        // At the default width and at those of a narrow and a wide terminal.
        for width in [nil, "50n", "60n", "120n"] {
            let groff = try ChildProcess(program: "/usr/bin/groff", ["-ww", "-man", "-Tutf8", "-z"] + (width.map { ["-rLL=\($0)"] } ?? []) + [path])
            #expect(groff.wait(timeout: 30) == 0, "\(groff.standardError)")
            #expect(groff.standardError.isEmpty, "\(String(describing: width)): \(groff.standardError)")
        }
        let rendered = try ChildProcess(program: "/usr/bin/groff", ["-man", "-Tascii", "-P-cbou", path])
        #expect(rendered.wait(timeout: 30) == 0)
        let text = rendered.lines.map(\.text).joined(separator: "\n")
        for setting in Settings.all {
            let entry = document == .manual ? (setting.isPositional ? setting.valueName : "--\(setting.name)") : "\(setting.name) ="
            #expect(text.contains(entry), "\(document.rawValue): \(entry)")
        }
    }

    /// The completions offer every option, and bash reads its script without a syntax error.
    @Test func theCompletionsOfferEveryOption() throws {
        for setting in Settings.all where !setting.isPositional {
            #expect(CompletionShell.bash.script.contains("--\(setting.name)"), "bash: \(setting.name)")
            #expect(CompletionShell.zsh.script.contains("--\(setting.name)["), "zsh: \(setting.name)")
            #expect(CompletionShell.fish.script.contains("-l '\(setting.name)'"), "fish: \(setting.name)")
        }
        #expect(CompletionShell.bash.script.contains("-F _queueplayerd queueplayerd"))
        #expect(CompletionShell.zsh.script.hasPrefix("#compdef queueplayerd\n"))
        #expect(CompletionShell.fish.script.contains("complete -c 'queueplayerd' -l 'output'"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("queueplayerd-completion-\(UUID()).bash")
        try CompletionShell.bash.script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let bash = try ChildProcess(program: "/bin/bash", ["-n", file.path])
        #expect(bash.wait(timeout: 30) == 0, "\(bash.standardError)")
        guard case .completion(.zsh) = try Self.parse(["--generate-completion-script", "zsh"]).get() else {
            throw CommandLineError("no completion")
        }
    }
}

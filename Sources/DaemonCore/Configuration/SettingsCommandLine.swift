/// The options of the command that are no setting: they say what to do rather than how to run.
public struct CommandOption: Sendable {
    public let name: String
    /// What follows the option (`PATH`); empty for none.
    public let valueName: String
    public let short: Character?
    public let summary: String
    public let manual: String
    /// Left out of `--help` and the manual: for `make man`, not for users.
    public let isHidden: Bool

    /// Every option of the command besides the settings.
    public static let all = [
        CommandOption(name: "config", valueName: "PATH", short: nil,
                      summary: "Read the settings from PATH instead",
                      manual: """
                          Read the settings from the TOML file PATH (queueplayerd.toml(5)), which must \
                          exist, instead of $XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml, which is read \
                          when it exists. An option given on the command line wins over the file. \
                          --config /dev/null starts without the file's settings.
                          """, isHidden: false),
        CommandOption(name: "help", valueName: "", short: "h", summary: "Print this help and exit",
                      manual: "Print a summary of the options and exit.", isHidden: false),
        CommandOption(name: "version", valueName: "", short: nil, summary: "Print the version and exit",
                      manual: "Print the version and the MPD protocol version the control socket announces, and exit.",
                      isHidden: false),
        CommandOption(name: "print-document", valueName: "NAME", short: nil,
                      summary: "Print a document made from the settings: " + SettingsDocument.allCases.map(\.rawValue).joined(separator: ", "),
                      manual: "", isHidden: true),
        CommandOption(name: "generate-completion-script", valueName: "SHELL", short: nil,
                      summary: "Print the completion script of a shell: " + CompletionShell.allCases.map(\.rawValue).joined(separator: ", "),
                      manual: "", isHidden: true),
    ]

    /// The option with its value, as `--help` writes it: `--config <PATH>`.
    var helpForm: String {
        let long = "--\(name)" + (valueName.isEmpty ? "" : " <\(valueName)>")
        return short.map { "-\($0), \(long)" } ?? long
    }
}

/// What a command line asks for.
public enum CommandLineRequest: Sendable {
    /// Run the daemon with these settings, over those of the configuration file `config` (nil: the default file).
    case run(config: String?, settings: DaemonSettings)
    case help
    case version
    case document(SettingsDocument)
    case completion(CompletionShell)
}

/// A command line that cannot be used: printed with the usage, status 64.
public struct CommandLineError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads the command line into the settings (``Settings``): each setting is `--name VALUE` (or
/// `--name=VALUE`), a flag `--name` (and `--no-name` where it may be turned off), a list an option
/// given once per element; the arguments that are no option are the FILE arguments, and so is
/// everything after `--`.
public enum SettingsCommandLine {
    public static let usage = "Usage: queueplayerd [<options>] [<FILE> ...]\n  See 'queueplayerd --help' for more information."

    public static func parse(_ arguments: [String]) -> Result<CommandLineRequest, CommandLineError> {
        var settings = DaemonSettings()
        var config: String?
        var document: CommandLineRequest?
        var positional: [String] = []
        var index = 0
        /// The value of the option at `index - 1`: after its `=`, or the next argument.
        func value(form: String, inline: Substring?) -> Result<String, CommandLineError> {
            if let inline { return .success(String(inline)) }
            guard index < arguments.count, !looksLikeAnOption(arguments[index]) else {
                return .failure(CommandLineError("Missing value for '\(form)'"))
            }
            index += 1
            return .success(arguments[index - 1])
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                positional += arguments[index...]
                break
            }
            guard looksLikeAnOption(argument) else {
                positional.append(argument)
                continue
            }
            if argument == "-h" { return .success(.help) }
            guard argument.hasPrefix("--") else { return .failure(CommandLineError("Unknown option '\(argument)'")) }
            var name = argument.dropFirst(2)
            var inline: Substring?
            if let equals = name.firstIndex(of: "=") {
                inline = name[name.index(after: equals)...]
                name = name[..<equals]
            }
            if let command = CommandOption.all.first(where: { $0.name == name }) {
                if command.valueName.isEmpty, inline != nil {
                    return .failure(CommandLineError("The option '--\(name)' takes no value"))
                }
                switch command.name {
                case "help": return .success(.help)
                case "version": return .success(.version)
                case "config":
                    switch value(form: command.helpForm, inline: inline) {
                    case .success(let path): config = path
                    case .failure(let error): return .failure(error)
                    }
                default:
                    switch value(form: command.helpForm, inline: inline) {
                    case .success(let name):
                        if command.name == "print-document", let named = SettingsDocument(rawValue: name) {
                            document = .document(named)
                        } else if command.name == "generate-completion-script", let shell = CompletionShell(rawValue: name) {
                            document = .completion(shell)
                        } else {
                            return .failure(CommandLineError("The value '\(name)' is invalid for '\(command.helpForm)'"))
                        }
                    case .failure(let error): return .failure(error)
                    }
                }
                continue
            }
            if let setting = Settings.named(String(name)), !setting.isPositional {
                let form = "--\(setting.name)" + (setting.valueName.isEmpty ? "" : " <\(setting.valueName)>")
                if setting.isFlag {
                    guard inline == nil else { return .failure(CommandLineError("The option '--\(name)' takes no value")) }
                    settings[name: setting.name] = true
                    continue
                }
                let text: String
                if inline == nil, let bare = setting.bareArgument(before: index < arguments.count ? arguments[index] : nil) {
                    text = bare
                } else {
                    switch value(form: form, inline: inline) {
                    case .success(let given): text = given
                    case .failure(let error): return .failure(error)
                    }
                }
                switch setting.argument(text, previous: settings[name: setting.name]) {
                case .success(let parsed): settings[name: setting.name] = parsed
                case .failure(let problem): return .failure(CommandLineError("\(setting.option): \(problem.text)."))
                }
                continue
            }
            if name.hasPrefix("no-"), let setting = Settings.named(String(name.dropFirst(3))), setting.inversion, inline == nil {
                settings[name: setting.name] = false
                continue
            }
            return .failure(CommandLineError("Unknown option '--\(name)'"))
        }
        if let document { return .success(document) }
        if !positional.isEmpty, let files = Settings.all.first(where: \.isPositional) {
            var value: (any Sendable)?
            for text in positional {
                guard case .success(let parsed) = files.argument(text, previous: value) else { continue }
                value = parsed
            }
            settings[name: files.name] = value
        }
        return .success(.run(config: config, settings: settings))
    }

    /// An option rather than a value or a FILE: `-x` or `--x`, but not `-` (standard input) nor a
    /// negative number (`--background-time -1` is a value out of range, not a missing one).
    static func looksLikeAnOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil
    }
}

import Foundation

/// The shells' completions of the command line, made from the settings (``Settings``) and the
/// command's options: `queueplayerd --generate-completion-script bash|zsh|fish`.
public enum CompletionShell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    public var script: String {
        switch self {
        case .bash: SettingsCompletions.bash
        case .zsh: SettingsCompletions.zsh
        case .fish: SettingsCompletions.fish
        }
    }
}

enum SettingsCompletions {
    /// One option as the completions see it.
    struct Option {
        var long: String
        var short: Character?
        var summary: String
        /// Takes a value; what is offered for it.
        var takesValue: Bool
        var values: [String]
        var directories: Bool
        var files: Bool
        var repeatable: Bool
    }

    static var options: [Option] {
        var options: [Option] = []
        for setting in Settings.all where !setting.isPositional {
            let value = setting.valueName
            let option = Option(long: setting.name, short: nil, summary: setting.summary, takesValue: !setting.isFlag,
                                values: setting.values, directories: value == "DIR",
                                files: value.contains("PATH") || value.contains("FILE"), repeatable: setting.isRepeatable)
            options.append(option)
            if setting.inversion {
                options.append(Option(long: "no-\(setting.name)", short: nil, summary: "Not --\(setting.name)", takesValue: false,
                                      values: [], directories: false, files: false, repeatable: false))
            }
        }
        for command in CommandOption.all where !command.isHidden {
            options.append(Option(long: command.name, short: command.short, summary: command.summary,
                                  takesValue: !command.valueName.isEmpty, values: [], directories: false,
                                  files: command.valueName.contains("PATH"), repeatable: false))
        }
        return options
    }

    static let header = "Made by `queueplayerd --generate-completion-script` from the settings' declarations."

    static var bash: String {
        let all = options
        var lines = ["# bash completion for queueplayerd. \(header)",
                     "_queueplayerd() {",
                     "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
                     "    case $prev in"]
        func branch(_ options: [Option], _ action: String) {
            guard !options.isEmpty else { return }
            lines += ["        " + options.map { "--\($0.long)" }.joined(separator: "|") + ")",
                      "            \(action); return ;;"]
        }
        let valued = all.filter(\.takesValue)
        branch(valued.filter(\.directories), "COMPREPLY=($(compgen -d -- \"$cur\"))")
        for option in valued where !option.directories && !option.values.isEmpty {
            let files = option.files ? "; COMPREPLY+=($(compgen -f -- \"$cur\"))" : ""
            branch([option], "COMPREPLY=($(compgen -W '\(option.values.joined(separator: " "))' -- \"$cur\"))\(files)")
        }
        branch(valued.filter { $0.files && !$0.directories && $0.values.isEmpty }, "COMPREPLY=($(compgen -f -- \"$cur\"))")
        branch(valued.filter { !$0.files && !$0.directories && $0.values.isEmpty }, "COMPREPLY=()")
        let words = all.flatMap { option in ["--\(option.long)"] + (option.short.map { ["-\($0)"] } ?? []) }
        lines += ["    esac",
                  "    if [[ $cur == -* ]]; then",
                  "        COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- \"$cur\"))",
                  "    else",
                  "        COMPREPLY=($(compgen -f -- \"$cur\"))",
                  "    fi",
                  "}",
                  "complete -o filenames -F _queueplayerd queueplayerd"]
        return lines.joined(separator: "\n") + "\n"
    }

    static var zsh: String {
        /// A description inside `[...]` of an `_arguments` spec, itself in single quotes.
        func quoted(_ text: String) -> String {
            var escaped = ""
            for character in text {
                switch character {
                case "[", "]", ":", "\\": escaped += "\\\(character)"
                case "'": escaped += "'\\''"
                default: escaped.append(character)
                }
            }
            return escaped
        }
        var specs: [String] = []
        for option in options {
            var action = ""
            if option.takesValue {
                let values = option.values.map { quoted($0) }.joined(separator: " ")
                action = ":\(quoted(option.long)):" + (option.directories ? "_files -/" : !option.values.isEmpty ? "(\(values))"
                                                        : option.files ? "_files" : " ")
            }
            let names = option.short.map { "'(-\($0) --\(option.long))'{-\($0),--\(option.long)}'" } ?? "'\(option.repeatable ? "*" : "")--\(option.long)"
            specs.append("    \(names)[\(quoted(option.summary))]\(action)'")
        }
        specs.append("    '*:FILE:_files'")
        return (["#compdef queueplayerd", "# \(header)", "", "_arguments -s \\"]
                + specs.enumerated().map { $0.offset == specs.count - 1 ? $0.element : $0.element + " \\" })
            .joined(separator: "\n") + "\n"
    }

    static var fish: String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        var lines = ["# fish completion for queueplayerd. \(header)"]
        for option in options {
            var line = "complete -c 'queueplayerd'" + (option.short.map { " -s \($0)" } ?? "") + " -l \(quoted(option.long))"
                + " -d \(quoted(option.summary))"
            if option.takesValue {
                if option.directories {
                    line += " -x -a '(__fish_complete_directories)'"
                } else if !option.values.isEmpty {
                    line += (option.files ? " -r -F" : " -x") + " -a \(quoted(option.values.joined(separator: " ")))"
                } else {
                    line += option.files ? " -r -F" : " -x"
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

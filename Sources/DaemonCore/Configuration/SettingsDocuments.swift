import Foundation

/// The documents made from the settings (``Settings``) and the command's options
/// (``CommandOption``): `--help`, the two man pages, docs/settings.md and the example
/// configuration file (docs/examples/queueplayerd.toml). `make man` writes the committed files with `queueplayerd --print-document
/// NAME`, and a test checks that they are what the declarations make now.
public enum SettingsDocument: String, CaseIterable, Sendable {
    case manual = "queueplayerd.1"
    case fileManual = "queueplayerd.toml.5"
    case markdown = "settings.md"
    case example = "queueplayerd.toml"

    /// Where the file is kept in the repository.
    public var path: String {
        switch self {
        case .manual, .fileManual: "docs/man/\(rawValue)"
        case .markdown: "docs/\(rawValue)"
        case .example: "docs/examples/\(rawValue)"
        }
    }

    public var text: String {
        switch self {
        case .manual: SettingsDocuments.manual
        case .fileManual: SettingsDocuments.fileManual
        case .markdown: SettingsDocuments.markdown
        case .example: SettingsDocuments.example
        }
    }
}

public enum SettingsDocuments {
    static let abstract = "a headless, gapless MP3 queue player with the MPD protocol"
    static let defaultFile = "$XDG_CONFIG_HOME/queueplayerd/queueplayerd.toml"

    /// The settings of `group`, in the order declared.
    static func settings(in group: SettingGroup) -> [any AnySetting] { Settings.all.filter { $0.group == group } }

    /// How `--help` writes a setting's option: `--buffer-time <MS>`, `--[no-]zeroconf`, `<FILE> ...`.
    static func helpForm(_ setting: any AnySetting) -> String {
        if setting.isPositional { return "<\(setting.valueName)> ..." }
        if setting.inversion { return "--\(setting.name), --no-\(setting.name)" }
        if setting.valueName.isEmpty { return "--\(setting.name)" }
        return setting.takesBareOption ? "--\(setting.name) [<\(setting.valueName)>]" : "--\(setting.name) <\(setting.valueName)>"
    }

    // MARK: --help

    /// `--help`: one line an option, by group; the explanations are the man page's.
    public static var help: String {
        var lines = ["queueplayerd: \(abstract).", "", "Usage: queueplayerd [<options>] [<FILE> ...]"]
        func row(_ form: String, _ summary: String) {
            let column = 30
            lines.append(form.count <= column - 4
                         ? "  " + form.padding(toLength: column - 2, withPad: " ", startingAt: 0) + summary
                         : "  \(form)\n" + String(repeating: " ", count: column) + summary)
        }
        for group in SettingGroup.allCases {
            lines += ["", "\(group.rawValue):"]
            for setting in settings(in: group) { row(helpForm(setting), setting.summary) }
        }
        lines += ["", "Options:"]
        for option in CommandOption.all where !option.isHidden { row(option.helpForm, option.summary) }
        lines += ["",
                  "Each setting is also a key of the configuration file, by the same name",
                  "(buffer-time = 1000): \(defaultFile).",
                  "See queueplayerd(1) and queueplayerd.toml(5)."]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Man pages

    /// Text for roff: backslashes escaped, options' dashes as minus signs, no line taken for a request.
    static func roff(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e")
        // A long path may break after any slash (`\:`, a break point of no width).
        escaped = escaped.replacingOccurrences(of: "/", with: "/\\:")
        escaped = escaped.replacing(/(^|[\s(\[])--([a-z])/) { "\($0.output.1)\\-\\-\($0.output.2)" }
        escaped = escaped.replacing(/(^|[\s(\[])-([a-z0-9])/) { "\($0.output.1)\\-\($0.output.2)" }
        return escaped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    /// `\fB\-\-name\fR \fIVALUE\fR`.
    static func roffOption(_ setting: any AnySetting) -> String {
        if setting.isPositional { return "\\fI\(roff(setting.valueName))\\fR ..." }
        let name = "\\fB\\-\\-\(setting.name)\\fR"
        if setting.inversion { return "\(name), \\fB\\-\\-no\\-\(setting.name)\\fR" }
        if setting.valueName.isEmpty { return name }
        let value = "\\fI\(roff(setting.valueName))\\fR"
        return setting.takesBareOption ? "\(name) [\(value)]" : "\(name) \(value)"
    }

    static func header(_ title: String, _ section: Int) -> [String] {
        [".\\\" Made by `queueplayerd --print-document` from the settings' declarations: edit those, then `make man`.",
         ".TH \(title) \(section) \"\" \"queueplayerd \(DaemonVersion.number)\" \"\(section == 1 ? "User Commands" : "File Formats")\"",
         // Options and keys are not hyphenated at the end of a line, nor lines stretched to the margin.
         ".nh", ".ad l"]
    }

    static func paragraphs(_ texts: [String]) -> [String] {
        texts.enumerated().flatMap { index, text in (index == 0 ? [] : [".PP"]) + [roff(text)] }
    }

    /// Each item a tagged paragraph: the tag in roff already, the text plain.
    static func items(_ items: [(tag: String, text: String)]) -> [String] {
        items.flatMap { [".TP", $0.tag, roff($0.text)] }
    }

    static func defaultLine(_ setting: any AnySetting) -> String? {
        if let text = setting.defaultText { return "Default: \(text)." }
        return setting.isFlag ? "Default: off." : nil
    }

    /// queueplayerd(1).
    public static var manual: String {
        var lines = header("QUEUEPLAYERD", 1)
        lines += [".SH NAME", "queueplayerd \\- \(abstract)"]
        lines += [".SH SYNOPSIS", ".B queueplayerd", "[\\fIOPTION\\fR]... [\\fIFILE\\fR]..."]
        lines += [".SH DESCRIPTION"] + paragraphs(description)
        lines += [".SH OPTIONS"] + paragraphs([
            "Every option but --config, --help and --version is also a setting of the configuration file, queueplayerd.toml(5), by the same name without the dashes. An option given on the command line wins over the file, and the file over the default. An option that takes a list is given once per element.",
        ])
        for group in SettingGroup.allCases {
            lines.append(".SS \(group.rawValue)")
            for setting in settings(in: group) {
                lines += [".TP", roffOption(setting), roff(([setting.manual] + [defaultLine(setting)].compactMap { $0 }).joined(separator: " "))]
            }
        }
        lines.append(".SS Other options")
        lines += items(CommandOption.all.filter { !$0.isHidden }.map { option in
            let long = "\\fB\\-\\-\(option.name)\\fR" + (option.valueName.isEmpty ? "" : " \\fI\(option.valueName)\\fR")
            return (option.short.map { "\\fB\\-\($0)\\fR, \(long)" } ?? long, option.manual)
        })
        lines += [".SH SIGNALS"] + items(signals.map { ("\\fB\($0.0)\\fR", $0.1) })
        lines += [".SH FILES"] + items(files.map { ("\\fI\(roff($0.0))\\fR", $0.1) })
        lines += [".SH ENVIRONMENT"] + items(environment.map { ("\\fB\($0.0)\\fR", $0.1) })
        lines += [".SH EXIT STATUS"] + items(exitStatuses.map { ("\\fB\($0.0)\\fR", $0.1) })
        lines.append(".SH EXAMPLES")
        for (text, command) in examples {
            lines += [".PP", roff(text), ".PP", ".RS", ".nf", roff(command), ".fi", ".RE"]
        }
        lines += [".SH SEE ALSO", "\\fBqueueplayerd.toml\\fR(5), \\fBmpc\\fR(1), \\fBmpd\\fR(1), \\fBsystemd.service\\fR(5)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// queueplayerd.toml(5).
    public static var fileManual: String {
        var lines = header("QUEUEPLAYERD.TOML", 5)
        lines += [".SH NAME", "queueplayerd.toml \\- the configuration file of queueplayerd"]
        lines += [".SH SYNOPSIS", "\\fI\(roff(defaultFile))\\fR"]
        lines += [".SH DESCRIPTION"] + paragraphs(fileDescription)
        lines.append(".SH SETTINGS")
        for group in SettingGroup.allCases {
            lines.append(".SS \(group.rawValue)")
            for setting in settings(in: group) {
                let option = setting.isPositional ? "the FILE arguments" : "\\fB\\-\\-\(setting.name)\\fR"
                lines += [".TP", "\\fB\(roff(setting.name))\\fR = \\fI\(roff(setting.fileType))\\fR",
                          roff(([setting.manual] + [defaultLine(setting)].compactMap { $0 }).joined(separator: " "))
                          + " Command line: \(option)."]
            }
        }
        lines += [".SH EXAMPLE", ".nf"] + example.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { roff(String($0)) } + [".fi"]
        lines += [".SH SEE ALSO", "\\fBqueueplayerd\\fR(1), \\fBmpd.conf\\fR(5)"]
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: docs/settings.md

    public static var markdown: String {
        var lines = ["<!-- Made by `queueplayerd --print-document settings.md` from the settings' declarations",
                     "     (Sources/DaemonCore/Configuration/Settings.swift): edit those, then `make man`. -->",
                     "# Settings", ""]
        lines += fileDescription.map { $0 + "\n" }
        lines += ["| Option | Key in the file | Default | What |", "| --- | --- | --- | --- |"]
        /// A table's cell: a `|`, in code too, would end it.
        func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
        for setting in Settings.all {
            let option = setting.isPositional ? "FILE ..." : setting.inversion ? "`--[no-]\(setting.name)`"
                : "`\(setting.optionWithValue)`"
            lines.append("| \(cell(option)) | [`\(setting.name)`](#\(setting.name)) | \(cell(setting.defaultText ?? (setting.isFlag ? "off" : ""))) | \(cell(prose(setting.summary))) |")
        }
        for group in SettingGroup.allCases {
            lines += ["", "## \(group.rawValue)"]
            for setting in settings(in: group) {
                lines += ["", "### \(setting.name)", ""]
                let option = setting.isPositional ? "the FILE arguments"
                    : setting.inversion ? "`--\(setting.name)`, `--no-\(setting.name)`" : "`\(setting.optionWithValue)`"
                var facts = ["Command line: \(option)", "file: `\(setting.name) =` \(setting.fileType)"]
                if let value = setting.defaultText ?? (setting.isFlag ? "off" : nil) { facts.append("default: \(value)") }
                lines += [facts.joined(separator: "; ") + ".", "", prose(setting.manual)]
            }
        }
        lines += ["", "## Example", "", "```toml", example + "```"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Plain text as Markdown: an underscore starting a word (`_mpd._tcp`) is no emphasis.
    static func prose(_ text: String) -> String {
        text.replacing(/(^|[\s(])_/) { "\($0.output.1)\\_" }
    }

    // MARK: The example file

    /// Every setting, by group, with its summary: set to its default, or commented out with an example.
    public static var example: String {
        var lines = ["# queueplayerd.toml: every setting, at its default or (commented out) an example.",
                     "# Copy it to \(defaultFile). The manual: queueplayerd.toml(5).",
                     "# A relative path is relative to this file's directory; ~/ is the home directory."]
        for group in SettingGroup.allCases {
            lines += ["", "# \(group.rawValue)"]
            for setting in settings(in: group) {
                lines.append("# \(setting.summary).")
                if let example = setting.example {
                    lines.append("# \(setting.name) = \(example)")
                } else if setting.isFlag {
                    lines.append("\(setting.name) = \(setting.defaultText == "on")")
                } else if let value = setting.defaultText {
                    lines.append("\(setting.name) = " + (Double(value) == nil ? "\"\(value)\"" : value))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: What the manual says besides the settings

    static let description = [
        "queueplayerd queues the given MP3 files (or the .mp3 files of --media, sorted by name) and plays them through ALSA without gaps. MPD clients (mpc, ncmpcpp, phone apps) control it over its control socket and TCP, with the MPD protocol; a web page and a WebSocket API are served with --http. Each new item is logged as \"Now playing: NAME\"; when standard output is a terminal, a status line below shows what plays.",
        "Like an iOS app with the audio background mode, the daemon is active in the foreground. SIGUSR1 sends it to the background, where it prints \"Background: SECONDS\" every 10 ms while playing; SIGUSR2 brings it back. In the background, with nothing playing and no background task left, it is suspended once its background time is spent: the audio device is closed until a control command wakes it.",
        "The queue, the current item, its position and play or pause are saved under $XDG_STATE_HOME/queueplayerd/ and restored at the next start, unless --media or FILE arguments are given (they are played instead, and saved from then on), or --once or --no-state.",
        "Podcast feeds (--feed, and the feeds file) are fetched in every state, a suspended daemon waking into the background for each fetch: at most every --fetch-interval seconds, with conditional requests, Retry-After honoured and failures backing off. An MPD message on the channel queueplayerd, {\"aps\":{\"content-available\":1}}, fetches now. New episodes are downloaded into Podcasts/ in the music directory, resumably, and appended to the queue.",
        "FILE arguments and clients' add may be http:// or https:// URLs of MP3 streams; a dropped connection is opened again, with back-off, for --stream-retry-time seconds, then the item fails and the queue moves on.",
    ]

    static let signals = [
        ("SIGUSR1", "Enter the background (will resign active, did enter background)."),
        ("SIGUSR2", "Return to the foreground (will enter foreground, did become active)."),
        ("SIGHUP", "Read the feeds file again."),
        ("SIGTERM, SIGINT", "Stop: the state is saved, clients are disconnected, what was written plays out, and the daemon exits with status 0."),
    ]

    static let files = [
        (defaultFile, "The configuration file, queueplayerd.toml(5); --config names another."),
        ("$XDG_CONFIG_HOME/queueplayerd/feeds", "Podcast feeds, one URL a line, # comments; read at start and on SIGHUP."),
        ("$XDG_STATE_HOME/queueplayerd/", "The saved state (the queue and position, the stored playlists) and sticker.sql; $STATE_DIRECTORY under systemd."),
        ("$XDG_RUNTIME_DIR/queueplayerd.sock", "The control socket (MPD protocol), unless --socket or --bind says otherwise."),
    ]

    static let environment = [
        ("XDG_CONFIG_HOME", "Where the configuration file and the feeds file are; ~/.config when unset."),
        ("XDG_STATE_HOME", "Where the state is saved; ~/.local/state when unset."),
        ("XDG_RUNTIME_DIR", "Where the control socket is; a private directory under /tmp when unset."),
        ("HOME", "What ~ in the configuration file means, and where ~/Music is."),
        ("QUEUEPLAYERD_LOG_LEVEL", "The log's level: trace, debug, info (the default), notice, warning, error or critical."),
        ("NOTIFY_SOCKET, WATCHDOG_USEC, LISTEN_FDS, JOURNAL_STREAM, STATE_DIRECTORY", "Set by systemd: readiness and watchdog notifications, sockets passed by socket activation, the journal's priority prefixes on the log, the state directory."),
    ]

    static let exitStatuses = [
        ("0", "Stopped by SIGTERM, SIGINT or a client's kill, or the queue played with --once."),
        ("1", "The daemon could not start or failed (the reason is logged)."),
        ("64", "A usage error: an unknown option, a value out of range, or a mistake in the configuration file (named with its line). systemd does not restart the daemon for it."),
    ]

    static let examples = [
        ("Play an album's files through the default device, and exit when they have played:",
         "queueplayerd --once ~/Music/Album/*.mp3"),
        ("Serve a library to MPD clients, playing to snapserver as well as the speakers:",
         "queueplayerd --music-directory ~/Music --output auto --output fifo:/tmp/snapfifo"),
        ("Listen on every address, with a password for what clients on the network may do:",
         "queueplayerd --bind any --password 's3cret@read,add,player,control'"),
        ("Try a configuration file: it is read, checked and played once, to no device:",
         "queueplayerd --config ./queueplayerd.toml --once --output null"),
    ]

    static let fileDescription = [
        "Every setting of queueplayerd can be given in its configuration file, \(defaultFile) (~/.config/queueplayerd/queueplayerd.toml), or in the file that --config names. The file is TOML, read once at start; its keys are the options' names without the dashes: buffer-time = 1000 is --buffer-time 1000.",
        "An option given on the command line wins over the file, and the file over the defaults. A list (output, feed, bind, password, files) is an array, or one string for an array of one; the command line's replaces the file's. What to play is one choice: --media, --music-directory or FILE arguments on the command line replace all three of the file's. A relative path is relative to the file's directory, and ~/ is the home directory.",
        "A missing default file is no settings; a file named by --config must exist. A mistake stops the daemon before it starts, with status 64 and the file and line: a syntax error, a key that is no setting, a value of the wrong type, or one out of range. So does a file beyond what a configuration file needs: over 1 MiB, more than 1000 keys, a key of more than 8 dotted parts, or arrays nested more than 32 deep.",
    ]
}

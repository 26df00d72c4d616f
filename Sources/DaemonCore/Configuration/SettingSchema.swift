import TOMLKit

/// The part of the manual and of `--help` a setting is listed under.
public enum SettingGroup: String, CaseIterable, Sendable {
    case playing = "What to play"
    case output = "Output"
    case clients = "Clients and the control socket"
    case lifecycle = "Background and saved state"
    case podcasts = "Podcasts and downloads"
    case pace = "Playback rate and skip silence"
    case streams = "Streams"
    case web = "The web page"
    case location = "Location"
    case resume = "Resume and statistics"
}

/// Why a value is refused, without saying where it came from: `give a number of clients, 1 or more`.
/// ``SettingOrigin`` puts the option or the file's line in front.
public struct SettingProblem: Error, Sendable {
    public let text: String
    public init(_ text: String) { self.text = text }
}

/// How a setting's value is written: one command-line argument, and a TOML value.
public struct SettingKind<Value: Sendable>: Sendable {
    /// What the configuration file takes, for the manual: `an integer`, `a string or an array of strings`.
    let fileType: String
    /// A flag takes no value on the command line (`--once`); its file value is a boolean.
    let isFlag: Bool
    /// The option may be given several times, each adding to the list.
    let isRepeatable: Bool
    /// One command-line value read onto what the command line said before (lists append).
    let argument: @Sendable (_ text: String, _ previous: Value?) -> Result<Value, SettingProblem>
    /// The configuration file's value, relative paths resolved by `reader`.
    let file: @Sendable (_ value: TOMLValueConvertible, _ reader: SettingFileReader) throws(SettingProblem) -> Value
}

extension SettingKind where Value == String {
    /// Any text.
    static var string: Self {
        Self(fileType: "a string", isFlag: false, isRepeatable: false,
             argument: { text, _ in .success(text) },
             file: { value, reader throws(SettingProblem) in try reader.string(value) })
    }

    /// A path; in the file, `~/` is the home directory and a relative path is beside the file.
    static var path: Self {
        Self(fileType: "a string (a path)", isFlag: false, isRepeatable: false,
             argument: { text, _ in .success(text) },
             file: { value, reader throws(SettingProblem) in reader.resolve(try reader.string(value)) })
    }
}

extension SettingKind where Value == [String] {
    /// A list: the option given once per element, or an array in the file (one string for a list of one).
    static var strings: Self { strings(resolving: { _, text in text }) }

    /// A list whose elements the file's reader may resolve (paths beside the file).
    static func strings(resolving resolve: @escaping @Sendable (SettingFileReader, String) -> String) -> Self {
        Self(fileType: "a string or an array of strings", isFlag: false, isRepeatable: true,
             argument: { text, previous in .success((previous ?? []) + [text]) },
             file: { value, reader throws(SettingProblem) in try reader.strings(value).map { resolve(reader, $0) } })
    }
}

extension SettingKind where Value: FixedWidthInteger {
    static var integer: Self {
        Self(fileType: "an integer", isFlag: false, isRepeatable: false,
             argument: { text, _ in Value(text).map { .success($0) } ?? .failure(SettingProblem("'\(text)' is not an integer")) },
             file: { value, reader throws(SettingProblem) in
                 let integer = try reader.integer(value)
                 guard let converted = Value(exactly: integer) else { throw SettingProblem("\(integer) is out of range") }
                 return converted
             })
    }
}

extension SettingKind where Value == Double {
    /// A number; the file takes an integer too (`background-time = 60`).
    static var number: Self {
        Self(fileType: "a number", isFlag: false, isRepeatable: false,
             argument: { text, _ in Double(text).map { .success($0) } ?? .failure(SettingProblem("'\(text)' is not a number")) },
             file: { value, reader throws(SettingProblem) in try reader.number(value) })
    }
}

extension SettingKind where Value == Bool {
    /// `--name` says true; the file says `name = true` or `false`.
    static var flag: Self {
        Self(fileType: "true or false", isFlag: true, isRepeatable: false,
             argument: { _, _ in .success(true) },
             file: { value, reader throws(SettingProblem) in try reader.boolean(value) })
    }
}

extension SettingKind {
    /// A value read from one string, by `parse`; `refusal` says why a text is not one.
    static func choice(fileType: String = "a string", _ parse: @escaping @Sendable (String) -> Value?,
                       refusal: @escaping @Sendable (String) -> String) -> Self {
        Self(fileType: fileType, isFlag: false, isRepeatable: false,
             argument: { text, _ in parse(text).map { .success($0) } ?? .failure(SettingProblem(refusal(text))) },
             file: { value, reader throws(SettingProblem) in
                 let text = try reader.string(value, expected: fileType)
                 guard let parsed = parse(text) else { throw SettingProblem(refusal(text)) }
                 return parsed
             })
    }

    /// A list of values each read from one string by `parse`: the option given once per element,
    /// or an array in the file.
    static func choices<Element: Sendable>(_ parse: @escaping @Sendable (String) -> Element?,
                                           refusal: @escaping @Sendable (String) -> String) -> Self where Value == [Element] {
        Self(fileType: "a string or an array of strings", isFlag: false, isRepeatable: true,
             argument: { text, previous in
                 parse(text).map { .success((previous ?? []) + [$0]) } ?? .failure(SettingProblem(refusal(text)))
             },
             file: { value, reader throws(SettingProblem) in
                 try reader.strings(value).map { text throws(SettingProblem) in
                     guard let parsed = parse(text) else { throw SettingProblem(refusal(text)) }
                     return parsed
                 }
             })
    }
}

/// One setting of the daemon, declared once (``Settings``): its option (`--name`), its key in the
/// configuration file (`name`), its value, its help, and what it does to ``DaemonOptions``.
public struct Setting<Value: Sendable>: AnySetting {
    public let name: String
    public let group: SettingGroup
    /// What `--help` writes after the option (`MS`); empty for a flag.
    public let valueName: String
    /// One line for `--help`.
    public let summary: String
    /// The manual's paragraph (plain text; `--name` and `name` are set in bold there).
    public let manual: String
    /// What the manual says the default is; nil: none worth saying.
    public let defaultText: String?
    /// A TOML value for the example file, which shows it commented out; nil: the default,
    /// shown as set.
    public let example: String?
    /// Values the shells' completions offer.
    public let values: [String]
    /// `--no-name` exists and says false (only for a flag).
    public let inversion: Bool
    /// A bare `--name` (last, or followed by what `accepts` refuses) means this value.
    let bareValue: (value: String, accepts: @Sendable (String) -> Bool)?
    /// Never on the command line (`files`, which are the FILE arguments there).
    public let isPositional: Bool
    /// Settings that are one choice: given on the command line, any of them replaces all the file's.
    public let oneOf: String?
    let kind: SettingKind<Value>
    /// Checks the value and sets it on the options the daemon runs with.
    let applying: @Sendable (Value, inout DaemonOptions) throws(SettingProblem) -> Void

    init(_ name: String, _ kind: SettingKind<Value>, group: SettingGroup, example: String? = nil, value valueName: String = "",
         default defaultText: String? = nil, inversion: Bool = false,
         bare: (value: String, accepts: @Sendable (String) -> Bool)? = nil,
         positional: Bool = false, oneOf: String? = nil, values: [String] = [],
         summary: String, manual: String,
         apply: @escaping @Sendable (Value, inout DaemonOptions) throws(SettingProblem) -> Void) {
        self.name = name
        self.example = example
        self.kind = kind
        self.group = group
        self.valueName = valueName
        self.defaultText = defaultText
        self.inversion = inversion
        self.bareValue = bare
        self.isPositional = positional
        self.oneOf = oneOf
        self.values = values
        self.summary = summary
        self.manual = manual
        self.applying = apply
    }

    /// A setting that checks its value with `check` (a problem, or nil) and stores it at `field`.
    init(_ name: String, _ kind: SettingKind<Value>, group: SettingGroup, example: String? = nil, value valueName: String = "",
         default defaultText: String? = nil, inversion: Bool = false,
         summary: String, manual: String,
         into field: WritableKeyPath<DaemonOptions, Value> & Sendable,
         check: @escaping @Sendable (Value) -> String? = { _ in nil }) {
        self.init(name, kind, group: group, example: example, value: valueName, default: defaultText, inversion: inversion,
                  summary: summary, manual: manual) { value, options throws(SettingProblem) in
            if let problem = check(value) { throw SettingProblem(problem) }
            options[keyPath: field] = value
        }
    }

    /// As `init(_:_:group:value:default:inversion:summary:manual:into:check:)`, for a field that may be nil.
    init(_ name: String, _ kind: SettingKind<Value>, group: SettingGroup, example: String? = nil, value valueName: String = "",
         default defaultText: String? = nil, inversion: Bool = false,
         summary: String, manual: String,
         into field: WritableKeyPath<DaemonOptions, Value?> & Sendable,
         check: @escaping @Sendable (Value) -> String? = { _ in nil }) {
        self.init(name, kind, group: group, example: example, value: valueName, default: defaultText, inversion: inversion,
                  summary: summary, manual: manual) { value, options throws(SettingProblem) in
            if let problem = check(value) { throw SettingProblem(problem) }
            options[keyPath: field] = value
        }
    }

    public var isFlag: Bool { kind.isFlag }
    public var isRepeatable: Bool { kind.isRepeatable }
    public var fileType: String { kind.fileType }
    public var takesBareOption: Bool { bareValue != nil }

    public func argument(_ text: String, previous: (any Sendable)?) -> Result<any Sendable, SettingProblem> {
        kind.argument(text, previous as? Value).map { $0 as any Sendable }
    }

    public func bareArgument(before next: String?) -> String? {
        guard let bareValue, next.map(bareValue.accepts) != true else { return nil }
        return bareValue.value
    }

    public func read(_ value: TOMLValueConvertible, _ reader: SettingFileReader) throws(SettingProblem) -> any Sendable {
        try kind.file(value, reader)
    }

    public func apply(_ value: any Sendable, to options: inout DaemonOptions) throws(SettingProblem) {
        guard let value = value as? Value else { preconditionFailure("\(name): a value of another setting's type") }
        try applying(value, &options)
    }
}

/// A setting of any value type, as the lists of ``Settings`` hold them.
public protocol AnySetting: Sendable {
    var name: String { get }
    var group: SettingGroup { get }
    var valueName: String { get }
    var summary: String { get }
    var manual: String { get }
    var defaultText: String? { get }
    var example: String? { get }
    var values: [String] { get }
    var inversion: Bool { get }
    var isPositional: Bool { get }
    var oneOf: String? { get }
    var isFlag: Bool { get }
    var isRepeatable: Bool { get }
    var fileType: String { get }
    var takesBareOption: Bool { get }
    /// One command-line value, onto what the command line gave before.
    func argument(_ text: String, previous: (any Sendable)?) -> Result<any Sendable, SettingProblem>
    /// The value a bare option means, when `next` (the following argument) is not its value.
    func bareArgument(before next: String?) -> String?
    /// The configuration file's value.
    func read(_ value: TOMLValueConvertible, _ reader: SettingFileReader) throws(SettingProblem) -> any Sendable
    func apply(_ value: any Sendable, to options: inout DaemonOptions) throws(SettingProblem)
}

extension AnySetting {
    /// How the command line spells it: `--buffer-time`, or `FILE arguments`.
    public var option: String { isPositional ? "\(valueName) arguments" : "--\(name)" }

    /// The option with its value: `--buffer-time MS`, `--once`.
    public var optionWithValue: String {
        isPositional ? option : valueName.isEmpty ? option : "\(option) \(valueName)"
    }
}

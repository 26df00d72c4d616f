/// The fuzzed entry points, by name: one per untrusted input of the daemon.
///
/// Each target takes arbitrary bytes and either returns (the input was handled:
/// accepted or refused with a clear error) or throws a ``FuzzFinding`` (a property
/// the daemon relies on did not hold). A crash or a sanitizer report is a finding too.
/// The libFuzzer drivers in `Fuzz/Sources` trap on a finding; the regression tests
/// replay the committed corpora and crashers through the same functions.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Bytes a client sends on the control socket, through ``MPDProtocol/ClientSession``.
    case mpdSession = "mpd-session"
    /// The contents of `state.json`, through `SavedState(validating:)`.
    case savedState = "saved-state"
    /// The contents of a file added to the queue, through `MPG123Decoder`.
    case mp3Decoder = "mp3-decoder"
    /// What gpsd sends the location source, through `GPSDReport` and `FixSanity`.
    case gpsdReport = "gpsd-report"

    /// The directory name of this target's corpus and regression inputs.
    public var name: String { rawValue }

    /// Runs one input.
    public func run(_ input: UnsafeRawBufferPointer) throws(FuzzFinding) {
        switch self {
        case .mpdSession: try MPDSessionFuzzTarget.run(input)
        case .savedState: try SavedStateFuzzTarget.run(input)
        case .mp3Decoder: try MP3DecoderFuzzTarget.run(input)
        case .gpsdReport: try GPSDReportFuzzTarget.run(input)
        }
    }

    /// Runs one input and traps on a finding, so that libFuzzer records the input as a crash.
    public func runOrTrap(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        do {
            try run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count))
        } catch {
            fatalError("\(name): \(error.message)")
        }
    }
}

/// A property that did not hold for an input.
public struct FuzzFinding: Error, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// Throws `message` unless `condition` holds.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFinding) {
        if !condition { throw FuzzFinding(message()) }
    }
}

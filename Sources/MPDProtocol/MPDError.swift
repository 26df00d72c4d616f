/// An error reply, rendered as `ACK [code@index] {command} message`.
///
/// Command parsing and the session's protocol commands throw these with `command` already
/// set. A ``CommandExecutor`` may throw them with an empty `command`: the session fills in
/// the name of the command that failed and the index inside a command list, exactly as mpd does.
public struct MPDError: Error, Hashable, Sendable {
    /// The numeric error class.
    public var code: ACKCode
    /// The human-readable text after the `{command}` part (mpc prints it after `MPD error: `).
    public var message: String
    /// The command name shown between braces; empty for unknown commands and tokenizer errors.
    public var command: String

    /// Creates an error. Leave `command` empty when throwing from an executor; the session sets it.
    public init(_ code: ACKCode, _ message: String, command: String = "") {
        self.code = code
        self.message = message
        self.command = command
    }

    /// The same error attributed to another command name.
    public func attributed(to command: String) -> MPDError {
        MPDError(code, message, command: command)
    }

    /// The complete ACK line, including the trailing `\n`.
    ///
    /// - Parameter index: the 0-based position of the failing command inside a command list (0 outside one).
    public func ackLine(index: Int = 0) -> String {
        "ACK [\(code.rawValue)@\(index)] {\(command)} \(ProtocolText.singleLine(message))\n"
    }
}

extension MPDError {
    /// `Bad song index` (code 2): a queue position outside the queue (`play 99`, `delete 99`).
    public static let badSongIndex = MPDError(.argument, "Bad song index")
    /// `Not playing` (code 55): `seekcur`, `next` or `previous` while stopped.
    public static let notPlaying = MPDError(.playerSync, "Not playing")
    /// `No such song` (code 50): an unknown song id.
    public static let noSuchSong = MPDError(.noExist, "No such song")
    /// `No such directory` (code 50): `add` of a URI that is neither a file nor a directory of the library.
    public static let noSuchDirectory = MPDError(.noExist, "No such directory")
    /// `No such audio output` (code 50): `enableoutput`/`disableoutput`/`toggleoutput` with an unknown id.
    public static let noSuchOutput = MPDError(.noExist, "No such audio output")
}

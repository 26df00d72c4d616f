import MPDProtocol

/// One `--password SECRET@PERMS` (mpd's `password "secret@read,add,control"`): what a client
/// that sends `password SECRET` may do from then on. The secret is everything before the last
/// `@`, so it may hold an `@` of its own.
///
/// Its `description` never shows the secret: an option error or a log line that prints a
/// setting must not put a password in the journal.
public struct PasswordSetting: Sendable, Equatable, CustomStringConvertible {
    public let secret: String
    public let permissions: Permission

    public init(secret: String, permissions: Permission) {
        self.secret = secret
        self.permissions = permissions
    }

    /// Parses `SECRET@PERMS`; the error never quotes the secret.
    public static func parse(_ text: String) throws(DaemonOptionError) -> PasswordSetting {
        guard let at = text.lastIndex(of: "@") else {
            throw DaemonOptionError("give SECRET@PERMISSIONS, e.g. s3cret@read,add,player,control (\"@\" not found)")
        }
        let secret = String(text[..<at])
        guard !secret.isEmpty else { throw DaemonOptionError("the password before \"@\" is empty") }
        do {
            return PasswordSetting(secret: secret, permissions: try Permission.parse(String(text[text.index(after: at)...])))
        } catch {
            throw DaemonOptionError("\(error.description): give some of read, add, player, control, admin")
        }
    }

    public var description: String { "(a password)@\(permissions)" }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The user's directories as the XDG base directory rules (and mpd) derive them from an
/// environment: the home directory is `$HOME` when it is set to an absolute path, and the home
/// directory of the user's passwd entry only when it is not; `XDG_CONFIG_HOME` and
/// `XDG_STATE_HOME` count when absolute (a relative one is ignored, as the rules say), else
/// `~/.config` and `~/.local/state`. Every default path of the daemon starts here.
public enum UserDirectories {
    public static func home(environment: [String: String]) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") { return URL(fileURLWithPath: home, isDirectory: true) }
        return passwdHome() ?? FileManager.default.homeDirectoryForCurrentUser
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    public static func configHome(environment: [String: String]) -> URL {
        base("XDG_CONFIG_HOME", else: ".config", environment: environment)
    }

    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    public static func stateHome(environment: [String: String]) -> URL {
        base("XDG_STATE_HOME", else: ".local/state", environment: environment)
    }

    /// `path` with a leading `~` or `~/` replaced by ``home(environment:)``; `~user/...` is that
    /// user's home (Foundation's expansion); any other path as it is.
    public static func expandingTilde(_ path: String, environment: [String: String]) -> String {
        guard path.hasPrefix("~") else { return path }
        let rest = path.dropFirst()
        guard rest.isEmpty || rest.hasPrefix("/") else { return (path as NSString).expandingTildeInPath }
        let home = home(environment: environment).path
        return rest.isEmpty ? home : (home as NSString).appendingPathComponent(String(rest.dropFirst()))
    }

    private static func base(_ variable: String, else relative: String, environment: [String: String]) -> URL {
        if let value = environment[variable], value.hasPrefix("/") { return URL(fileURLWithPath: value, isDirectory: true) }
        return home(environment: environment).appendingPathComponent(relative, isDirectory: true)
    }

    /// The home directory of the passwd entry of the process's user (getpwuid_r: thread-safe).
    private static func passwdHome() -> URL? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
            return nil
        }
        let path = String(cString: directory)
        return path.hasPrefix("/") ? URL(fileURLWithPath: path, isDirectory: true) : nil
    }
}

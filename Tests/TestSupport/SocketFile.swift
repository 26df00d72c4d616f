import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's file, as the safety tests look at it.
public enum SocketFile {
    /// `lstat`'s file type and permission bits of `path`.
    public static func mode(_ path: String) -> (isSocket: Bool, permissions: UInt32)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        let mode = UInt32(info.st_mode)
        return (mode & 0o170000 == 0o140000, mode & 0o7777)
    }

    /// Checks that `path` is a socket only its owner may use (mode 600).
    public static func expectPrivate(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let mode = Self.mode(path)
        #expect(mode?.isSocket == true, "\(path) is not a socket", sourceLocation: sourceLocation)
        #expect(mode?.permissions == 0o600,
                "\(path) has mode \(mode.map { String($0.permissions, radix: 8) } ?? "(missing)"), not 600",
                sourceLocation: sourceLocation)
    }
}

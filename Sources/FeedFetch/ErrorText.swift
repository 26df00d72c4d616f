import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// An error as a log line says it: the system's words for an errno (`strerror`), not
/// Foundation's `Error Domain=NSCocoaErrorDomain Code=640 "(null)"` for a full disk, which
/// is what `localizedDescription` gives on Linux for most file errors.
enum ErrorText {
    static func describe(_ error: any Error) -> String {
        // A message of the daemon's own ("... was removed while it was written") says most.
        if let error = error as? CocoaError, let description = error.userInfo[NSLocalizedDescriptionKey] as? String {
            return description
        }
        if let code = errno(of: error) { return String(cString: strerror(code)) }
        return "\(error)"
    }

    /// The errno behind `error`: its own code, the POSIX error under a Foundation one, or the
    /// errno a Foundation file error code stands for.
    static func errno(of error: any Error) -> Int32? {
        if let error = error as? POSIXError { return error.code.rawValue }
        if let error = error as? IOError { return error.errnoCode }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain { return Int32(bridged.code) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        guard let error = error as? CocoaError else { return nil }
        switch error.code {
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteFileExists: return EEXIST
        default: return nil
        }
    }
}

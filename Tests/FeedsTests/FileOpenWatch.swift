import Foundation
import Glibc

/// The witness that a file was (or was not) opened or read: an inotify watch for `IN_OPEN`
/// and `IN_ACCESS`. Looking for the file's content in the parse result is not enough: on
/// Linux, `XMLParser` drops the text of expanded entities, so a file could be read and
/// leave no trace in the result.
final class FileOpenWatch {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0, inotify_add_watch(descriptor, path, UInt32(IN_OPEN | IN_ACCESS)) >= 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    deinit {
        close(descriptor)
    }

    /// True if the file has been opened or read since the watch began.
    var wasTouched: Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        return read(descriptor, &buffer, buffer.count) > 0
    }
}

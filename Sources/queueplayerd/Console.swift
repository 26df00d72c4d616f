#if canImport(Glibc)
import Glibc
#endif

/// Writes the daemon's own output lines to stdout, unbuffered, one `write` per line,
/// so a pipe or the journal sees each line as it happens.
enum Console {
    static func line(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}

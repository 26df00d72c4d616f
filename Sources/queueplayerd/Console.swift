import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's terminal: its own output lines on stdout, log lines on stderr,
/// and, when stdout is a terminal, a status line kept at the bottom.
///
/// Every line goes out in one `write`, unbuffered, so a pipe or the journal sees
/// each as it happens. While a status line is shown, a line first clears it (the
/// status line is redrawn after), so lines never run into it.
enum Console {
    /// Erases the terminal line the cursor is on: carriage return, then "erase in line".
    static let clearLine = "\r\u{1B}[2K"

    private static let statusLineShown = Atomic<Bool>(false)

    /// Writes `text` and a newline to stdout.
    static func line(_ text: String) {
        write(prefixed(text + "\n"), to: STDOUT_FILENO)
    }

    /// Writes `text` (whole lines) to stderr.
    static func error(_ text: String) {
        write(prefixed(text), to: STDERR_FILENO)
    }

    /// Draws `text` as the status line, in place of the previous one (no newline).
    static func drawStatusLine(_ text: String) {
        statusLineShown.store(true, ordering: .relaxed)
        write(clearLine + text, to: STDOUT_FILENO)
    }

    /// Removes the status line, leaving the cursor at the start of an empty line.
    static func removeStatusLine() {
        guard statusLineShown.exchange(false, ordering: .relaxed) else { return }
        write(clearLine, to: STDOUT_FILENO)
    }

    private static func prefixed(_ text: String) -> String {
        statusLineShown.load(ordering: .relaxed) ? clearLine + text : text
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }
}

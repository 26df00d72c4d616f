import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's terminal: its own output lines on stdout, log lines on stderr,
/// and, when stdout is a terminal, a status line kept at the bottom.
///
/// Every line goes out in one `write`, unbuffered, so a pipe or the journal sees
/// each as it happens. While a status line is shown, a line written to the terminal
/// first clears it and is followed by it again, so lines never run into it and it
/// stays in view; a line going to a file or a pipe is written as it is.
package enum Console {
    /// Erases the terminal line the cursor is on: carriage return, then "erase in line".
    static let clearLine = "\r\u{1B}[2K"

    /// The status line's text while it is shown; held while writing, so lines and redraws never interleave.
    private static let statusLine = Mutex<String?>(nil)
    private static let terminals = (output: isatty(STDOUT_FILENO) == 1, error: isatty(STDERR_FILENO) == 1)

    /// True if stdout is a terminal (where a status line belongs).
    static var outputIsTerminal: Bool { terminals.output }

    /// Writes `text` and a newline to stdout.
    package static func line(_ text: String) {
        emit(text + "\n", to: STDOUT_FILENO, isTerminal: terminals.output)
    }

    /// Writes `text` (whole lines) to stderr.
    static func error(_ text: String) {
        emit(text, to: STDERR_FILENO, isTerminal: terminals.error)
    }

    /// Draws `text` as the status line, in place of the previous one (no newline).
    static func drawStatusLine(_ text: String) {
        statusLine.withLock { shown in
            shown = text
            write(clearLine + text, to: STDOUT_FILENO)
        }
    }

    /// Removes the status line, leaving the cursor at the start of an empty line.
    static func removeStatusLine() {
        statusLine.withLock { shown in
            guard shown != nil else { return }
            shown = nil
            write(clearLine, to: STDOUT_FILENO)
        }
    }

    private static func emit(_ text: String, to descriptor: Int32, isTerminal: Bool) {
        statusLine.withLock { shown in
            guard let shown, isTerminal else { return write(text, to: descriptor) }
            write(clearLine + text, to: descriptor)
            write(shown, to: STDOUT_FILENO)
        }
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

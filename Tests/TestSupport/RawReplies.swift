#if canImport(Glibc)
import Glibc
#endif

/// Replies read as raw bytes, for the tests that read replies too long to split into lines.
public enum RawReplies {
    /// Sends `command` and reads raw bytes up to the end of its reply, which must end in
    /// `OK` (a song listing has no other line `OK`). No line splitting: a reply of 20,000
    /// lines is read in linear time.
    public static func rawReply(_ client: UnixSocketClient, _ command: String, timeout: Double = 30) throws -> [UInt8] {
        try client.send(command + "\n")
        let end = Array("\nOK\n".utf8)
        return try read(client, timeout: timeout) { $0.count >= end.count && $0.suffix(end.count).elementsEqual(end) }
    }

    /// Reads raw bytes until there are at least `count`.
    public static func read(_ client: UnixSocketClient, atLeast count: Int, timeout: Double = 30) throws -> [UInt8] {
        try read(client, timeout: timeout) { $0.count >= count }
    }

    public static func read(_ client: UnixSocketClient, timeout: Double, until isComplete: ([UInt8]) -> Bool) throws -> [UInt8] {
        let deadline = ChildProcess.now() + timeout
        var bytes: [UInt8] = []
        while !isComplete(bytes) {
            guard ChildProcess.now() < deadline else { throw UnixSocketError("no complete reply within \(timeout) s (\(bytes.count) bytes)") }
            switch client.receive(timeout: deadline - ChildProcess.now()) {
            case .data(let more): bytes += more
            case .endOfFile: throw UnixSocketError("end of file after \(bytes.count) bytes")
            case .timedOut: continue
            case .failed(let error): throw UnixSocketError("recv: \(String(cString: strerror(error)))")
            }
        }
        return bytes
    }
}

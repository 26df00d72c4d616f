#if canImport(FoundationEssentials)
import struct FoundationEssentials.URL
#else
import struct Foundation.URL
#endif

/// Why an item could not be played, naming the file and the cause.
public struct DecoderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure a user can act on differently.
    public enum Reason: Sendable, Hashable {
        /// There is no file at the path.
        case fileNotFound
        /// The file exists but cannot be read (permissions, a directory, I/O error).
        case unreadable(String)
        /// The file has no bytes.
        case empty
        /// No MPEG audio stream was found in it (another format, or noise).
        case notMPEGAudio(String)
        /// The file ends before the length its header announces.
        case truncated(decodedFrames: Int64, announcedFrames: Int64)
        /// The stream is damaged beyond what the decoder can skip.
        case corrupt(String)
        /// The stream changes sample rate or channels midway.
        case formatChange
        /// A network item cannot be played: the server's answer, the connection, the
        /// transport's limits (the text says which, for `cannot play: <url>: <why>`).
        case network(String)
        /// The URL is refused before any connection (a scheme other than http/https,
        /// credentials in it).
        case refused(String)
        /// The stream is in a format the player does not decode (Ogg, AAC, HTML...).
        case unsupportedFormat(String)
    }

    /// The file the error is about.
    public var url: URL
    /// What went wrong.
    public var reason: Reason

    public init(url: URL, reason: Reason) {
        self.url = url
        self.reason = reason
    }

    public var description: String {
        let name = url.isFileURL ? url.path : url.absoluteString
        return "\(name): \(why)"
    }

    /// The cause alone, without the item's name: what follows `cannot play: <url>: `.
    public var why: String {
        switch reason {
        case .fileNotFound: return "no such file"
        case .unreadable(let why): return "cannot read the file: \(why)"
        case .empty: return url.isFileURL ? "the file is empty" : "the server sent no audio"
        case .notMPEGAudio(let why): return url.isFileURL ? "not an MP3 file (\(why))" : "not an MP3 stream (\(why))"
        case .truncated(let decoded, let announced):
            return "the file is truncated: \(decoded) of the \(announced) samples its header announces are present"
        case .corrupt(let why): return "the MPEG stream is corrupt: \(why)"
        case .formatChange: return "the stream changes sample rate or channel count midway"
        case .network(let why), .refused(let why): return why
        case .unsupportedFormat(let why): return "not an MP3 stream: \(why)"
        }
    }
}

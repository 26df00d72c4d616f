import struct Foundation.URL

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
        switch reason {
        case .fileNotFound: return "\(name): no such file"
        case .unreadable(let why): return "\(name): cannot read the file: \(why)"
        case .empty: return "\(name): the file is empty"
        case .notMPEGAudio(let why): return "\(name): not an MP3 file (\(why))"
        case .truncated(let decoded, let announced):
            return "\(name): the file is truncated: \(decoded) of the \(announced) samples its header announces are present"
        case .corrupt(let why): return "\(name): the MPEG stream is corrupt: \(why)"
        case .formatChange: return "\(name): the stream changes sample rate or channel count midway"
        }
    }
}

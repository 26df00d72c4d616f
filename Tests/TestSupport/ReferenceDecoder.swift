import CMPG123
import Foundation

/// What libmpg123 itself decodes for a file: gapless, signed 16-bit, native rate
/// and channels. Written directly against the C API, independently of the
/// engine's decoder, so the engine's output can be checked against it.
public enum ReferenceDecoder {
    public struct Output {
        public var sampleRate: Int
        public var channels: Int
        public var pcm: Data
    }

    /// Decodes `url`; with `rate` and `channels`, to that format only (libmpg123 resamples
    /// and maps channels itself), as a FIFO output's items are.
    public static func decode(_ url: URL, rate forcedRate: Int? = nil, channels forcedChannels: Int? = nil) throws -> Output {
        mpg123_init()
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else { throw failure("mpg123_new failed") }
        defer { mpg123_delete(handle) }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue), 0)
        mpg123_format_none(handle)
        if let forcedRate, let forcedChannels {
            let layout = forcedChannels == 1 ? MPG123_MONO.rawValue : MPG123_STEREO.rawValue
            mpg123_format(handle, forcedRate, Int32(layout), Int32(MPG123_ENC_SIGNED_16.rawValue))
        } else {
            var rates: UnsafePointer<Int>?
            var count = 0
            mpg123_rates(&rates, &count)
            for index in 0..<count {
                mpg123_format(handle, rates![index], Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue), Int32(MPG123_ENC_SIGNED_16.rawValue))
            }
        }
        guard mpg123_open(handle, url.path) == MPG123_OK.rawValue else { throw failure("cannot open \(url.path)") }
        defer { mpg123_close(handle) }
        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else { throw failure("no format") }
        var pcm = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var done = 0
            let result = buffer.withUnsafeMutableBytes { mpg123_read(handle, $0.baseAddress, $0.count, &done) }
            pcm.append(contentsOf: buffer[0..<done])
            if result == MPG123_DONE.rawValue { break }
            if result != MPG123_OK.rawValue && result != MPG123_NEW_FORMAT.rawValue { throw failure("decoding \(url.path) failed") }
        }
        return Output(sampleRate: rate, channels: Int(channels), pcm: pcm)
    }

    private static func failure(_ text: String) -> Error {
        CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: text])
    }
}

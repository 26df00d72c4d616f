import AsyncHTTPClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LazyHTTP
import NIOCore
import QueuePlayer

/// Opens `http://` and `https://` items as streams read by ``HTTPStreamSource`` and decoded by
/// QueuePlayer's ``MPG123StreamDecoder``; every other item goes to the file factory it wraps.
/// The one line a player needs: `QueuePlayer(sink: ..., decoderFactory: HTTPStreamingDecoderFactory())`.
///
/// Opening a stream does not wait for the network (the player's control queue opens items):
/// it refuses a URL with credentials or another scheme at once, and everything else
/// (a 404, a page that is not audio, a server that never answers) fails the item when the
/// render thread reaches it, with the reason as ``DecoderError/why``. The factory owns one
/// `HTTPClient` (redirects followed up to the configured limit, cycles refused, certificates
/// verified), made when the first stream connects (``LazyHTTPClient``: a daemon that plays only
/// files never starts NIO's shared event loops); ``shutdown()`` must be awaited before it is released.
public final class HTTPStreamingDecoderFactory: DecoderFactory {
    private let files: any DecoderFactory
    private let outputFormat: AudioFormat?
    public let configuration: HTTPStreamingConfiguration
    private let client: LazyHTTPClient

    /// `files` opens everything that is not http(s) (its output format should be
    /// `outputFormat`, the one every stream decodes to as well; nil: each item's own).
    /// `eventLoopGroup` nil: NIO's shared group (`HTTPClient.defaultEventLoopGroup`), started
    /// with the client.
    public init(files: any DecoderFactory = MPG123DecoderFactory(), outputFormat: AudioFormat? = nil,
                configuration: HTTPStreamingConfiguration = HTTPStreamingConfiguration(),
                eventLoopGroup: (any EventLoopGroup)? = nil) {
        self.files = files
        self.outputFormat = outputFormat
        self.configuration = configuration
        var client = HTTPClient.Configuration(redirectConfiguration: .follow(max: configuration.maximumRedirects, allowCycles: false))
        client.timeout = .init(connect: .nanoseconds(Int64(configuration.connectTimeout * 1e9)),
                               read: .nanoseconds(Int64(configuration.stallTimeout * 1e9)))
        client.decompression = .disabled
        if let trusted = configuration.trustedCertificates { client.tlsConfiguration = trusted.clientConfiguration }
        self.client = LazyHTTPClient(eventLoopGroup: eventLoopGroup, configuration: client)
    }

    /// Closes the HTTP client (its connections), if a stream made it; streams still open fail,
    /// and so do streams opened after.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Why `url` cannot be a network item, or nil if it can: only http and https, without
    /// credentials (they would travel and be logged in the clear), with a host.
    public static func refusal(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased() else { return "not a URL" }
        guard scheme == "http" || scheme == "https" else { return "the scheme \(scheme): is not played (only http and https)" }
        if url.user != nil || url.password != nil { return "a URL with credentials in it is refused" }
        if url.host?.isEmpty ?? true { return "the URL has no host" }
        return nil
    }

    public func makeDecoder(for url: URL) throws(DecoderError) -> any Decoder {
        if url.isFileURL { return try files.makeDecoder(for: url) }
        if let why = Self.refusal(of: url) { throw DecoderError(url: url, reason: .refused(why)) }
        let source = HTTPStreamSource(url: url, client: client, configuration: configuration)
        return try MPG123StreamDecoder(source: source, outputFormat: outputFormat)
    }
}

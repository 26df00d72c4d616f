import Foundation
import NIOSSL

/// Certificates trusted besides the system's for https:// items (the daemon's `--ca-file`): a
/// station or podcast host behind a private certificate authority, or a test's own one.
///
/// Read once, when the daemon starts, so that a file that is missing or holds no certificate
/// is an error at start-up, naming the file, rather than every https item failing later.
/// The system's trust store (`/etc/ssl/certs`) stays trusted: these are added to it.
public struct TrustedCertificates: Sendable {
    /// The file they were read from, as given.
    public let path: String
    let certificates: [NIOSSLCertificate]

    /// Reads every PEM certificate in the file at `path`.
    public init(contentsOf path: String) throws(TrustedCertificatesError) {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TrustedCertificatesError(path: path, reason: "cannot read it (\(error.localizedDescription))")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(bytes))
        } catch {
            throw TrustedCertificatesError(path: path, reason: Self.describe(error))
        }
        guard !certificates.isEmpty else {
            throw TrustedCertificatesError(path: path, reason: "it holds no PEM certificate")
        }
        self.path = path
        self.certificates = certificates
    }

    /// The TLS settings of a client that trusts these besides the system's.
    var clientConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.additionalTrustRoots = [.certificates(certificates)]
        return configuration
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as NIOSSLError:
            if case .failedToLoadCertificate = error { return "it holds no PEM certificate that can be read" }
            return "cannot read PEM certificates from it (\(error))"
        case let error as BoringSSLError:
            return "cannot read PEM certificates from it (\(error))"
        default:
            return "cannot read it (\(error))"
        }
    }
}

/// Why ``TrustedCertificates`` could not be read.
public struct TrustedCertificatesError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String { "\(path): \(reason)" }
}

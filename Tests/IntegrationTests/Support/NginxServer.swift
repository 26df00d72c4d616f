import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Debian's nginx (`scripts/bootstrap` installs it), run by the test as the current user with
/// a configuration of its own in a scratch directory: `daemon off`, its pid, error log, temp
/// directories and documents under that directory, listening on a free port of 127.0.0.1
/// (found as the Snapcast tests find theirs),
/// and an access log that records what the feed tests check (status, validators, ranges,
/// request time), one line a request.
///
/// A real server, so that what the daemon sends and what it makes of the answers (ETag and
/// Last-Modified from the file, 304s, 429s, slow bodies) is nginx's behaviour, not a
/// hand-written imitation of it.
final class NginxServer {
    /// One request from the access log.
    struct Request: CustomStringConvertible {
        /// When nginx logged it (wall clock, milliseconds): when the response ended.
        var time: Double
        var status: Int
        var path: String
        var ifNoneMatch: String
        var ifModifiedSince: String
        var range: String
        var ifRange: String
        /// Seconds from the first byte read to the log write.
        var requestTime: Double

        /// When the request arrived (wall clock).
        var start: Double { time - requestTime }

        var description: String {
            "\(String(format: "%.3f", time)) \(status) \(path) inm=\(ifNoneMatch) ims=\(ifModifiedSince) rt=\(requestTime)"
        }
    }

    static let binary = "/usr/sbin/nginx"
    let directory: URL
    /// Where documents are served from (`root`).
    let documents: URL
    private(set) var port: UInt16 = 0
    private var process: ChildProcess?
    private let locations: String
    /// The certificate and key nginx answers TLS with (then it speaks only HTTPS), or nil.
    private let tls: (certificate: URL, key: URL)?

    /// `locations` is added to the `server` block as it is (nginx's syntax); with `tls`,
    /// nginx listens for HTTPS with that certificate (PEM files) and ``url(_:)`` says `https`.
    init(locations: String = "", tls: (certificate: URL, key: URL)? = nil) throws {
        directory = try TestMedia.scratchDirectory()
        documents = directory.appendingPathComponent("www")
        self.locations = locations
        self.tls = tls
        for name in ["www", "logs", "tmp"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `http://127.0.0.1:PORT/path` (`https` with TLS).
    func url(_ path: String) -> URL { URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)/\(path)")! }

    /// Makes a self-signed certificate for 127.0.0.1 (its subject alternative name) with
    /// `openssl req -x509` in `directory`: one no client trusts, as a misconfigured station's.
    static func selfSignedCertificate(in directory: URL) throws -> (certificate: URL, key: URL) {
        let certificate = directory.appendingPathComponent("cert.pem")
        let key = directory.appendingPathComponent("key.pem")
        try TestMedia.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                               "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                               "-keyout", key.path, "-out", certificate.path])
        return (certificate, key)
    }

    /// A location for ``init(locations:)`` that serves `/PREFIX/...` from the documents' `PREFIX`
    /// directory at `bytesPerSecond` (`limit_rate`): a slow link for the streaming tests, with
    /// nginx's own range support (`Accept-Ranges: bytes`, 206, `If-Range`) as on any path.
    static func slowLocation(_ prefix: String, bytesPerSecond: Int) -> String {
        "location /\(prefix)/ { limit_rate \(bytesPerSecond); }"
    }

    /// Writes a document (atomically: nginx never serves half of it).
    func serve(_ path: String, _ data: Data) throws {
        let file = documents.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file, options: .atomic)
    }

    /// Starts nginx on a free port (again after ``stop()``, on the same port). Another
    /// process can take the port between the probe and nginx's bind: then a new one is tried.
    func start() throws {
        var lastError = ""
        for _ in 0..<5 {
            if port == 0 || process != nil { port = UInt16(try SnapcastPair.freePort()) }
            try writeConfiguration()
            let child = try ChildProcess(program: Self.binary, ["-p", directory.path + "/", "-c", configurationFile.path,
                                                                "-e", directory.appendingPathComponent("logs/error.log").path])
            let ready = waitUntil(timeout: 10) { !child.isRunning || SnapcastPair.accepts(port: Int(port)) }
            if ready && child.isRunning {
                process = child
                return
            }
            child.terminate()
            lastError = (try? String(contentsOf: directory.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
            port = 0
        }
        throw NginxError("nginx did not start: \(lastError)")
    }

    /// Stops nginx (fast shutdown) and waits for it to exit.
    func stop() {
        guard let process else { return }
        process.send(SIGTERM)
        if process.wait(timeout: 10) == nil { process.terminate() }
        self.process = nil
    }

    /// Every request logged so far, in order.
    var requests: [Request] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("logs/access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8, let time = Double(fields[0]), let status = Int(fields[1]),
                  let requestTime = Double(fields[7]) else { return nil }
            func value(_ text: String) -> String { text == "-" ? "" : text }
            return Request(time: time, status: status, path: fields[2], ifNoneMatch: value(fields[3]),
                           ifModifiedSince: value(fields[4]), range: value(fields[5]), ifRange: value(fields[6]),
                           requestTime: requestTime)
        }
    }

    /// The requests for `path`.
    func requests(for path: String) -> [Request] { requests.filter { $0.path == "/" + path } }

    // MARK: - Private

    private var configurationFile: URL { directory.appendingPathComponent("nginx.conf") }

    private func writeConfiguration() throws {
        let prefix = directory.path
        // As root, nginx's workers would run as `nobody`, who cannot read the scratch directory.
        let user = getuid() == 0 ? "user root;" : ""
        let configuration = """
            daemon off;
            master_process on;
            worker_processes 1;
            \(user)
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/logs/error.log info;
            events { worker_connections 64; }
            http {
                log_format feeds '$msec\\t$status\\t$uri\\t$http_if_none_match\\t$http_if_modified_since\\t$http_range\\t$http_if_range\\t$request_time';
                access_log \(prefix)/logs/access.log feeds;
                client_body_temp_path \(prefix)/tmp/body;
                proxy_temp_path \(prefix)/tmp/proxy;
                fastcgi_temp_path \(prefix)/tmp/fastcgi;
                uwsgi_temp_path \(prefix)/tmp/uwsgi;
                scgi_temp_path \(prefix)/tmp/scgi;
                types { application/rss+xml xml; audio/mpeg mp3; text/html html; audio/x-mpegurl m3u; audio/x-scpls pls; }
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl");
            \(tls.map { "ssl_certificate \($0.certificate.path); ssl_certificate_key \($0.key.path);" } ?? "")
                    root \(documents.path);
            \(locations)
                }
            }
            """
        try configuration.write(to: configurationFile, atomically: true, encoding: .utf8)
    }
}

/// nginx could not be set up.
struct NginxError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

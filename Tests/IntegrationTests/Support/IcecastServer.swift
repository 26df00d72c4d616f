import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Debian's icecast2 (`scripts/bootstrap` installs it) with a live MP3 mount fed by ffmpeg as
/// its source client: the internet radio of the streaming tests, on 127.0.0.1.
///
/// icecast runs as a child of the test with a configuration of its own in a scratch directory
/// (never as the system service), on a port found free by a probe (another one is tried if the
/// port is taken before icecast binds it). ffmpeg sends a 128 kbit/s stereo MP3 of a generated
/// tone at real-time pace (`-re`) and names the stream (`icy-name`). Titles change through
/// icecast's admin interface (`/admin/metadata?mode=updinfo`), as a station's playout system
/// does: ffmpeg's icecast output sends metadata only once, at the start.
///
/// Nothing waits a fixed time: ``start()`` returns once icecast's status page lists the mount,
/// which is when a listener gets audio. ``kill()`` ends icecast as a crash would (SIGKILL);
/// ``start()`` brings it back on the same port, with a new source.
final class IcecastServer {
    static let binary = "/usr/bin/icecast2"
    static let ffmpeg = "/usr/bin/ffmpeg"

    let directory: URL
    /// The mount point, with its leading slash.
    let mount: String
    /// What `icy-name` says (ffmpeg's `-ice_name`).
    let streamName: String
    private(set) var port: UInt16 = 0
    private var server: ChildProcess?
    private var source: ChildProcess?
    private let sourcePassword = "source-\(UUID().uuidString.prefix(8))"
    private let adminPassword = "admin-\(UUID().uuidString.prefix(8))"

    init(mount: String = "/live.mp3", streamName: String = "queueplayerd test radio") throws {
        directory = try TestMedia.scratchDirectory()
        self.mount = mount
        self.streamName = streamName
        let logs = directory.appendingPathComponent("log")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        if getuid() == 0 {
            // icecast refuses to run as root: it drops to `nobody` (changeowner), who must be
            // able to reach the scratch directory and write the logs.
            chmod(directory.path, 0o755)
            chmod(logs.path, 0o777)
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `http://127.0.0.1:PORT/MOUNT`.
    var url: URL { URL(string: "http://127.0.0.1:\(port)\(mount)")! }

    var isRunning: Bool { server?.isRunning ?? false }

    /// Starts icecast (on the port it had, if it ran before) and the source, and returns once
    /// the mount is listed on the status page.
    func start() throws {
        // A restart keeps the port: the daemon under test holds the URL.
        let restarting = port != 0
        var lastError = ""
        for _ in 0..<(restarting ? 1 : 5) {
            if port == 0 { port = UInt16(try SnapcastPair.freePort()) }
            try writeConfiguration()
            let child = try ChildProcess(program: Self.binary, ["-c", configurationFile.path])
            let up = waitUntil(timeout: 10) { !child.isRunning || statusPage() != nil }
            if up && child.isRunning {
                server = child
                try startSource()
                return
            }
            child.terminate()
            lastError = child.standardError + errorLog
            if !restarting { port = 0 }
        }
        throw IcecastError("icecast2 did not start: \(lastError)")
    }

    /// Ends the source and icecast (SIGTERM) and waits for both.
    func stop() {
        source?.terminate()
        source = nil
        server?.terminate()
        server = nil
    }

    /// Ends icecast as a crash would (SIGKILL: listeners' connections reset), then its source.
    func kill() {
        if let server {
            server.send(SIGKILL)
            server.wait(timeout: 10)
        }
        server = nil
        source?.terminate()
        source = nil
    }

    /// Sets the mount's title (`StreamTitle` in the ICY metadata listeners get next).
    func setTitle(_ title: String) throws {
        var components = URLComponents(string: "http://127.0.0.1:\(port)/admin/metadata")!
        components.queryItems = [URLQueryItem(name: "mount", value: mount), URLQueryItem(name: "mode", value: "updinfo"),
                                 URLQueryItem(name: "song", value: title)]
        let reply = try Self.get(components.url!, user: "admin", password: adminPassword)
        guard reply.status == 200, String(decoding: reply.body, as: UTF8.self).contains("<return>1</return>") else {
            throw IcecastError("metadata update refused (\(reply.status)): \(String(decoding: reply.body, as: UTF8.self))")
        }
    }

    /// The listeners icecast counts on the mount (its status page), or nil if it does not answer.
    var listeners: Int? {
        guard let page = statusPage(), let source = page["source"] as? [String: Any] else { return nil }
        return source["listeners"] as? Int
    }

    // MARK: - Private

    private var configurationFile: URL { directory.appendingPathComponent("icecast.xml") }

    private var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("log/error.log"), encoding: .utf8)) ?? ""
    }

    private func startSource() throws {
        let arguments = ["-nostdin", "-loglevel", "error", "-re",
                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                         "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k",
                         "-content_type", "audio/mpeg", "-ice_name", streamName, "-f", "mp3",
                         "icecast://source:\(sourcePassword)@127.0.0.1:\(port)\(mount)"]
        let child = try ChildProcess(program: Self.ffmpeg, arguments)
        let listed = waitUntil(timeout: 15) { !child.isRunning || mountIsListed }
        guard listed, child.isRunning else {
            child.terminate()
            throw IcecastError("the source did not reach \(mount): \(child.standardError) \(errorLog)")
        }
        source = child
    }

    private var mountIsListed: Bool {
        guard let page = statusPage() else { return false }
        let sources = (page["source"] as? [[String: Any]]) ?? (page["source"] as? [String: Any]).map { [$0] } ?? []
        return sources.contains { ($0["listenurl"] as? String)?.hasSuffix(mount) ?? false }
    }

    /// `icestats` of `/status-json.xsl`, or nil while icecast does not answer.
    private func statusPage() -> [String: Any]? {
        guard port != 0, let reply = try? Self.get(URL(string: "http://127.0.0.1:\(port)/status-json.xsl")!),
              reply.status == 200,
              let json = try? JSONSerialization.jsonObject(with: reply.body) as? [String: Any] else { return nil }
        return json["icestats"] as? [String: Any]
    }

    private func writeConfiguration() throws {
        let owner = getuid() == 0
            ? "<security><chroot>0</chroot><changeowner><user>nobody</user><group>nogroup</group></changeowner></security>"
            : ""
        let configuration = """
            <icecast>
              <location>test</location><admin>test@localhost</admin>
              <limits><clients>64</clients><sources>4</sources><source-timeout>5</source-timeout>
                <burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
              <authentication><source-password>\(sourcePassword)</source-password>
                <admin-user>admin</admin-user><admin-password>\(adminPassword)</admin-password></authentication>
              <hostname>127.0.0.1</hostname>
              <listen-socket><port>\(port)</port><bind-address>127.0.0.1</bind-address></listen-socket>
              <fileserve>1</fileserve>
              <paths><basedir>\(directory.path)</basedir><logdir>\(directory.path)/log</logdir>
                <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
              <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
              \(owner)
            </icecast>
            """
        try configuration.write(to: configurationFile, atomically: true, encoding: .utf8)
    }

    /// One session for every GET, never invalidated: a session made and invalidated per request
    /// crashed the test process in FoundationNetworking's `invalidateAndCancel()` (SIGILL in its
    /// `Collection.map`, seen once in a fresh clone's `make test`).
    private static let session = URLSession(configuration: .ephemeral)

    /// A GET on loopback (URLSession, waited for), with HTTP basic authentication if given.
    static func get(_ url: URL, user: String? = nil, password: String? = nil, timeout: Double = 5) throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        if let user, let password {
            request.setValue("Basic " + Data("\(user):\(password)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        let result = Outcome()
        let done = DispatchSemaphore(value: 0)
        Self.session.dataTask(with: request) { data, response, error in
            if let error {
                result.value.withLock { $0 = .failure(error) }
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                result.value.withLock { $0 = .success((status, data ?? Data())) }
            }
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + timeout + 1) == .success, let outcome = result.value.withLock({ $0 }) else {
            throw IcecastError("GET \(url) did not finish within \(timeout) s")
        }
        let (status, body) = try outcome.get()
        return (status, body)
    }
}

/// What a URLSession callback thread hands back.
private final class Outcome: Sendable {
    let value = Mutex<Result<(Int, Data), any Error>?>(nil)
}

/// icecast2 or its source could not be set up.
struct IcecastError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

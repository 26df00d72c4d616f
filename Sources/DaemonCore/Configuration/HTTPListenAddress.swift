/// Where `--http` serves the web page and the WebSocket API: `[ADDR:]PORT` (ADDR defaults to
/// 127.0.0.1; an IPv6 address in brackets, `[::1]:6680`), or `off`.
///
/// Parsed here rather than in the executable so that the configuration file's reader and the
/// tests read it the same way. A name that is not an address literal other than `localhost` is
/// refused: the daemon binds what it was told, and only a literal says whether that is loopback
/// (which decides whether a token is required, ``isLoopback``).
public struct HTTPListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address to bind, as given (`127.0.0.1`, `0.0.0.0`, `::1`, `localhost`).
    public var host: String
    /// The TCP port; 0 lets the kernel choose one (the tests' choice; the log says which).
    public var port: Int

    /// The documented default for `make run` and the systemd unit.
    public static let conventional = HTTPListenAddress(host: "127.0.0.1", port: 6680)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `[ADDR:]PORT`; nil for `off`. Throws a sentence for anything else.
    public static func parse(_ text: String) throws(DaemonOptionError) -> HTTPListenAddress? {
        if text == "off" { return nil }
        var host = "127.0.0.1"
        var portText = Substring(text)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw DaemonOptionError("--http \(text): give [IPv6]:PORT, e.g. [::1]:6680.")
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw DaemonOptionError("--http \(text): put an IPv6 address in brackets, e.g. [::1]:6680.")
            }
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw DaemonOptionError("--http \(text): give [ADDR:]PORT with a port from 0 to 65535, or off.")
        }
        guard host == "localhost" || isIPv4(host) || host.contains(":") else {
            throw DaemonOptionError("--http \(text): give an IP address (or localhost), not a host name.")
        }
        return HTTPListenAddress(host: host, port: port)
    }

    /// True for an address only this machine reaches: 127.0.0.0/8, ::1, localhost.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && Self.isIPv4(host)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && Int(part).map { (0...255).contains($0) } == true
        }
    }
}

/// `--location [gpsd[:HOST[:PORT]]]`: where fixes come from. Only gpsd for now; the host and
/// port default to gpsd's own (localhost:2947). An IPv6 address goes in brackets: `gpsd:[::1]:2947`.
public struct LocationChoice: Hashable, Sendable {
    public var host: String
    public var port: UInt16

    public static let defaultHost = "localhost"
    public static let defaultPort: UInt16 = 2947

    public init(host: String = LocationChoice.defaultHost, port: UInt16 = LocationChoice.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Parses `gpsd`, `gpsd:HOST`, `gpsd:HOST:PORT` (or the empty text of a bare `--location`).
    public init?(argument: String) {
        guard argument.isEmpty || argument == "gpsd" || argument.hasPrefix("gpsd:") else { return nil }
        var rest = Substring(argument.dropFirst(min(argument.count, 5)))
        var host = Substring(Self.defaultHost)
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            rest = rest.dropFirst()
        } else if !rest.isEmpty {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0].isEmpty ? host : parts[0]
            rest = parts.count > 1 ? parts[1] : ""
            if parts.count > 1 && rest.isEmpty { return nil }
        }
        var port = Self.defaultPort
        if !rest.isEmpty {
            guard let number = UInt16(rest), number > 0 else { return nil }
            port = number
        }
        guard !host.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        self.init(host: String(host), port: port)
    }

    public var description: String {
        host.contains(":") ? "gpsd:[\(host)]:\(port)" : "gpsd:\(host):\(port)"
    }
}

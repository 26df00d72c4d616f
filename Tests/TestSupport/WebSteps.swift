import Foundation
import Testing

/// A daemon that serves the web page and the WebSocket API at `base` (`http://host:port`).
public protocol WebServingDaemon {
    var base: String { get }
}

extension WebServingDaemon {
    /// Runs `Scripts/<script>` with the base URL, a scenario and its arguments; the steps it printed.
    public func run(_ scenario: String, _ arguments: [String] = [], script: String = "ws_api.py", timeout: Double = 60,
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> WebSteps {
        try WebSteps.run(script, base: base, scenario, arguments, timeout: timeout, sourceLocation: sourceLocation)
    }
}

/// The `http://host:port` of a daemon log's `web page: http://host:port/` line.
public func webAddress(in log: String) -> String? {
    guard let range = log.range(of: "web page: http://") else { return nil }
    let rest = log[range.upperBound...]
    guard let slash = rest.firstIndex(of: "/") else { return nil }
    return "http://" + rest[..<slash]
}

/// The web address a daemon's log names once it serves the page (`log` read every 20 ms for
/// up to `timeout` seconds); nil if it named none.
public func waitForWebAddress(timeout: Double = 10, log: () -> String) -> String? {
    var found: String?
    _ = waitUntil(timeout: timeout) {
        found = webAddress(in: log())
        return found != nil
    }
    return found
}

/// The JSON steps a script printed (`{"step": ..., "ok": ...}` or `{"step": ..., "error": ...}`).
public struct WebSteps {
    private var values: [String: Any] = [:]
    public private(set) var order: [String] = []

    public init(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  let step = object["step"] as? String else {
                Issue.record("not a step: \(line)", sourceLocation: sourceLocation)
                continue
            }
            if let error = object["error"] as? String {
                Issue.record("step \(step) failed: \(error)", sourceLocation: sourceLocation)
                continue
            }
            order.append(step)
            values[step] = object["ok"] ?? NSNull()
        }
    }

    /// Runs `Tests/IntegrationTests/Scripts/<script>` (a WebSocket or HTTP client in Python)
    /// with the base URL, a scenario and its arguments; the steps it printed.
    public static func run(_ script: String, base: String, _ scenario: String, _ arguments: [String] = [], timeout: Double = 60,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> WebSteps {
        let path = TestMedia.integrationTests.appendingPathComponent("Scripts/\(script)").path
        let child = try ChildProcess(program: "/usr/bin/python3", [path, base, scenario] + arguments)
        let status = child.wait(timeout: timeout)
        if status == nil { child.terminate() }
        #expect(status == 0, "\(script) \(scenario) exited \(status.map(String.init) ?? "(killed: no exit within the timeout)"); stdout: \(child.lines.map(\.text)); stderr: \(child.standardError.debugDescription)",
                sourceLocation: sourceLocation)
        return WebSteps(child.lines.map(\.text), sourceLocation: sourceLocation)
    }

    /// The step's value; records an issue when the script did not print it.
    public subscript(step: String) -> Any? { value(step) }

    public func value(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any? {
        guard let value = values[step] else {
            Issue.record("no step \(step) (steps: \(order))", sourceLocation: sourceLocation)
            return nil
        }
        return value is NSNull ? nil : value
    }

    public func object(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        (value(step, sourceLocation: sourceLocation) as? [String: Any]) ?? [:]
    }

    /// The `ok` body of an answer step.
    public func ok(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any? {
        let answer = object(step, sourceLocation: sourceLocation)
        #expect(answer["error"] == nil, "\(step): \(answer)", sourceLocation: sourceLocation)
        return answer["ok"]
    }

    /// The `error` body of an answer step.
    public func error(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        let answer = object(step, sourceLocation: sourceLocation)
        #expect(answer["error"] != nil, "\(step) should be an error: \(answer)", sourceLocation: sourceLocation)
        return answer["error"] as? [String: Any] ?? [:]
    }
}

/// Percentiles of a sample (nearest rank).
public func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

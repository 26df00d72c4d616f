import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `queueplayerd` with `--http 127.0.0.1:0` (the kernel picks a free port, which the log
/// names) on the real-time null output, playing `Media/`; ready once `init` returns.
final class WebDaemon {
    let control: ControlDaemon
    /// `http://127.0.0.1:PORT`.
    let base: String
    var process: ChildProcess { control.process }

    /// `media`: what it plays (`--media DIR`, or `--music-directory DIR` for downloads);
    /// `environment` is added to the daemon's.
    init(_ extra: [String] = [], http: String = "127.0.0.1:0", media: [String] = ["--media", TestMedia.directory.path],
         environment: [String: String] = [:]) throws {
        control = try ControlDaemon(media + ["--no-state", "--http", http] + extra, environment: environment)
        let deadline = ChildProcess.now() + 10
        var found: String?
        while found == nil && ChildProcess.now() < deadline {
            found = Self.address(in: control.process.standardError)
            if found == nil { _ = poll(nil, 0, 20) }
        }
        guard let found else {
            let stderr = control.process.standardError
            control.stop()
            throw UnixSocketError("the daemon named no web address within 10 s; stderr: \(stderr)")
        }
        base = found
    }

    /// The `http://host:port` of the log's `web page: http://host:port/` line.
    static func address(in log: String) -> String? {
        guard let range = log.range(of: "web page: http://") else { return nil }
        let rest = log[range.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return "http://" + rest[..<slash]
    }

    func stop() { control.stop() }

    /// Runs `Scripts/<script>` with the base URL, a scenario and its arguments; the steps it printed.
    func run(_ scenario: String, _ arguments: [String] = [], script: String = "ws_api.py", timeout: Double = 60,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> WebSteps {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/\(script)").path
        let run = try ToolRun.run("/usr/bin/python3", [path, base, scenario] + arguments, timeout: timeout)
        #expect(run.status == 0, "\(script) \(scenario): \(run)", sourceLocation: sourceLocation)
        return WebSteps(run.stdout, sourceLocation: sourceLocation)
    }
}

/// The JSON steps a script printed (`{"step": ..., "ok": ...}` or `{"step": ..., "error": ...}`).
struct WebSteps {
    private var values: [String: Any] = [:]
    private(set) var order: [String] = []

    init(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
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

    /// The step's value; records an issue when the script did not print it.
    subscript(step: String) -> Any? { value(step) }

    func value(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any? {
        guard let value = values[step] else {
            Issue.record("no step \(step) (steps: \(order))", sourceLocation: sourceLocation)
            return nil
        }
        return value is NSNull ? nil : value
    }

    func object(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        (value(step, sourceLocation: sourceLocation) as? [String: Any]) ?? [:]
    }

    /// The `ok` body of an answer step.
    func ok(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> Any? {
        let answer = object(step, sourceLocation: sourceLocation)
        #expect(answer["error"] == nil, "\(step): \(answer)", sourceLocation: sourceLocation)
        return answer["ok"]
    }

    /// The `error` body of an answer step.
    func error(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        let answer = object(step, sourceLocation: sourceLocation)
        #expect(answer["error"] != nil, "\(step) should be an error: \(answer)", sourceLocation: sourceLocation)
        return answer["error"] as? [String: Any] ?? [:]
    }
}

/// Percentiles of a sample (nearest rank).
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

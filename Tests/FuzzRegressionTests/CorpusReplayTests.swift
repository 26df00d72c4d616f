import Foundation
import FuzzTargets
import Testing

/// Every committed fuzzing input, replayed through its target: the seeds (which must keep
/// passing as the code changes) and the inputs that once crashed or broke a property.
@Suite struct CorpusReplayTests {
    /// Fuzz/ in this repository.
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(of target: FuzzTarget, in kind: String) throws -> [URL] {
        let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target.name)
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { !$0.lastPathComponent.hasPrefix(".") }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func replay(_ files: [URL], through target: FuzzTarget) throws {
        for file in files {
            let data = try Data(contentsOf: file)
            let finding = data.withUnsafeBytes { bytes -> FuzzFinding? in
                do throws(FuzzFinding) { try target.run(bytes) } catch { return error }
                return nil
            }
            if let finding { Issue.record("\(target.name)/\(file.lastPathComponent): \(finding.message)") }
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func theSeedCorpusPasses(_ target: FuzzTarget) throws {
        let files = try Self.inputs(of: target, in: "Corpus")
        #expect(files.count >= 5, "the seed corpus of \(target.name) is missing")
        try Self.replay(files, through: target)
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyRegressionInputPasses(_ target: FuzzTarget) throws {
        try Self.replay(try Self.inputs(of: target, in: "Regressions"), through: target)
    }
}

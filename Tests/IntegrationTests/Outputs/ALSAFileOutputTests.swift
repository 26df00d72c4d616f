import Foundation
import QueuePlayer
import TestSupport
import Testing

/// The daemon through the real alsa-lib, into its `file` plugin (over `null`):
/// unpaced, and every byte checked.
@Suite(.serialized) struct ALSAFileOutputTests {
    @Test func theOutputIsExactlyWhatLibmpg123DecodesForEachItemFormatChangeIncluded() throws {
        let urls = TestMedia.all
        try #require(urls.count >= 4, "Media/ must hold its items")
        let formats = try urls.map { try ReferenceDecoder.decode($0) }
        try #require(Set(formats.map(\.sampleRate)).count > 1, "the queue must change format")

        let directory = try TestMedia.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("output.raw")
        let config = directory.appendingPathComponent("asoundrc")
        // A pipe appends across the reopening a format change needs (a plain file would be rewritten).
        try """
            pcm.capture {
                type file
                slave.pcm "null"
                file "|cat >> \(output.path)"
                format "raw"
            }
            """.write(to: config, atomically: true, encoding: .utf8)

        let daemon = try ChildProcess(["--media", TestMedia.directory.path, "--output", "alsa:capture", "--once"],
                                      environment: ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(config.path)"])
        let status = daemon.wait(timeout: 120)
        #expect(status == 0, "stderr: \(daemon.standardError)")

        let expected = formats.reduce(into: Data()) { $0.append($1.pcm) }
        let actual = try Data(contentsOf: output)
        #expect(actual.count == expected.count, "wrote \(actual.count) bytes, libmpg123 decodes \(expected.count)")
        if actual != expected {
            let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            Issue.record("the output differs from the reference first at byte \(firstDifference.map(String.init) ?? "end")")
        }
        #expect(daemon.lines.filter { $0.text.hasPrefix("Now playing: ") }.count == urls.count)
    }
}

import Foundation
import QueuePlayer
import Testing
@testable import DaemonCore

/// `--rate`, `--pitch-algorithm`, `--skip-silence` and a feed's `rate=R`, on the command line and
/// in the configuration file.
@Suite struct PaceSettingsTests {
    private static func options(_ arguments: [String]) throws -> DaemonOptions {
        try SettingsSchemaTests.settings(arguments).options(over: nil)
    }

    /// Why the command line `arguments` is refused: when it is parsed, or when its values are checked.
    private static func refusal(_ arguments: [String]) -> String {
        if let refusal = SettingsSchemaTests.refusal(arguments) { return refusal }
        do {
            _ = try options(arguments)
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func theCommandLineAndTheFileSetTheDefaults() throws {
        let options = try Self.options(["--rate", "1.5", "--pitch-algorithm", "varispeed", "--skip-silence"])
        #expect(options.rate == 1.5 && options.pitchAlgorithm == .varispeed && options.skipSilence)
        let plain = try Self.options([])
        #expect(plain.rate == 1 && plain.pitchAlgorithm == .timeDomain && !plain.skipSilence)
        let file = try ConfigurationFileTests.options("rate = 2\npitch-algorithm = \"varispeed\"\nskip-silence = true\n").get()
        #expect(file.rate == 2 && file.pitchAlgorithm == .varispeed && file.skipSilence)
    }

    @Test func badValuesAreRefusedNamingTheRange() {
        for rate in ["0", "-1", "100", "abc", "nan"] {
            let refusal = Self.refusal(["--rate", rate])
            #expect(refusal.contains("0.5 to 3.0") || refusal.contains("is not a number"), "--rate \(rate): \(refusal)")
        }
        #expect(Self.refusal(["--pitch-algorithm", "nope"]).contains("give timeDomain or varispeed"))
    }

    @Test func aFeedMayCarryItsOwnRate() throws {
        let options = try Self.options(["--feed", "https://example.com/show.xml rate=1.8", "--feed", "https://example.com/other.xml"])
        let show = try #require(URL(string: "https://example.com/show.xml"))
        #expect(options.feeds.map(\.absoluteString) == ["https://example.com/show.xml", "https://example.com/other.xml"])
        #expect(options.feedRates == [show: 1.8])
        for bad in ["https://example.com/a.xml rate=9", "https://example.com/a.xml speed=2", "https://example.com/a.xml rate=1 x"] {
            #expect(Self.refusal(["--feed", bad]).contains("rate=R, R from 0.5 to 3.0"), "\(bad)")
        }
    }
}

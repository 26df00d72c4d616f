import DaemonState
import Foundation
import Testing

/// The playback rate, pitch algorithm and skip silence in `state.json`: kept, read back, and a
/// value the player cannot take refused as any other unusable state is.
@Suite struct SavedStatePaceTests {
    private static func state(_ pace: String) -> Data {
        Data(#"{"version": 1, "queue": [], "position": 0, "paused": true\#(pace)}"#.utf8)
    }

    @Test func thePaceIsKeptAndAStateWithoutOneStillReads() throws {
        let saved = SavedState(queue: [], current: nil, position: 0, paused: true,
                               pace: SavedState.Pace(rate: 1.5, pitchAlgorithm: "varispeed", skipsSilence: true))
        let read = try SavedState(validating: JSONEncoder().encode(saved))
        #expect(read.pace == saved.pace)
        #expect(try SavedState(validating: Self.state("")).pace == nil)
    }

    @Test func aRateOrAlgorithmThePlayerCannotTakeIsRefused() {
        for pace in [#"{"rate": 9, "pitchAlgorithm": "timeDomain", "skipsSilence": false}"#,
                     #"{"rate": 0, "pitchAlgorithm": "timeDomain", "skipsSilence": false}"#,
                     #"{"rate": 1, "pitchAlgorithm": "spectral", "skipsSilence": false}"#] {
            #expect(throws: SavedStateError.self, "\(pace)") { try SavedState(validating: Self.state(#", "pace": "# + pace)) }
        }
    }
}

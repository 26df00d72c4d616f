import DaemonState
import Foundation
import Testing

/// A state file is used only if the daemon can restore it: anything else is refused with a
/// reason (and moved aside by the store), never a crash at every start.
@Suite struct SavedStateValidationTests {
    func validate(_ json: String) -> Result<SavedState, SavedStateError> {
        Result { () throws(SavedStateError) in try SavedState(validating: Data(json.utf8)) }
    }

    func reason(_ json: String) -> String? {
        if case .failure(let error) = validate(json) { error.reason } else { nil }
    }

    @Test func aStateTheDaemonWroteIsAccepted() throws {
        let state = SavedState(queue: ["/m/a.mp3", "/m/b.mp3"], current: 1, position: 12.5, paused: true)
        let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(try validate(json).get() == state)
        #expect(try validate(#"{"version":1,"queue":[],"position":0,"paused":false}"#).get().current == nil)
    }

    /// Restoring started playback at item -1: an index out of range, at every start.
    @Test func aNegativeCurrentItemIsRefused() {
        let reason = reason(#"{"version":1,"queue":["/m/a","/m/b"],"current":-1,"position":0,"paused":true}"#)
        #expect(reason?.contains("current item -1") == true, "\(String(describing: reason))")
    }

    @Test func aCurrentItemPastTheQueueIsRefused() {
        let reason = reason(#"{"version":1,"queue":["/m/a"],"current":1,"position":0,"paused":true}"#)
        #expect(reason?.contains("not in its queue of 1") == true, "\(String(describing: reason))")
    }

    /// Restoring seeked to 1e10 s: more nanoseconds than a MediaTime holds, a trap at every start.
    @Test(arguments: ["1e10", "-5", "1.0000001e9"])
    func aPositionOutsideAFileIsRefused(_ position: String) {
        let reason = reason(#"{"version":1,"queue":["/m/a"],"current":0,"position":\#(position),"paused":false}"#)
        #expect(reason?.contains("position") == true, "\(String(describing: reason))")
    }

    /// Ranges (`rangeid`) are kept index for index with the queue, in milliseconds.
    @Test func rangesAreAcceptedOnlyAsAStartAndAnEndPerFile() throws {
        let state = SavedState(queue: ["/m/a", "/m/b"], current: 0, position: 0.5, paused: false, ranges: [[1000, 5000], [0, 0]])
        let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(try validate(json).get() == state)
        #expect(try validate(#"{"version":1,"queue":["/m/a"],"position":0,"paused":false}"#).get().ranges == nil)
        let queue = #"{"version":1,"queue":["/m/a"],"position":0,"paused":false,"ranges":"#
        #expect(reason(queue + "[]}")?.contains("0 ranges for a queue of 1") == true)
        for bad in ["[[5000,1000]]", "[[1000]]", "[[-1,0]]", "[[0,1000000000001]]", "[[1,2,3]]"] {
            #expect(reason(queue + bad + "}")?.contains("is not a start and an end") == true, "\(bad)")
        }
    }

    @Test func versionsOtherThanOneAreRefusedWithWhatTheyAre() {
        #expect(reason(#"{"version":0,"queue":[],"position":0,"paused":false}"#)?.contains("no valid version (0)") == true)
        #expect(reason(#"{"version":2,"queue":[],"position":0,"paused":false}"#)?.contains("newer queueplayerd (version 2)") == true)
    }

    @Test func unreadableFilesSayWhy() {
        #expect(reason("{ not json")?.hasPrefix("it cannot be read (") == true)
        #expect(reason(#"{"version":1,"queue":["/m/a"],"paused":false}"#) == "it cannot be read (no position)")
    }
}

import DaemonState
import Testing
@testable import DaemonCore

/// Files that vanished between runs: what is left of the queue, and where its current item went.
@Suite struct SavedStateTests {
    let state = SavedState(queue: ["/m/0", "/m/1", "/m/2", "/m/3", "/m/4"], current: 3, position: 7.5, paused: false)

    @Test func theCurrentItemMovesUpByTheFilesDroppedBeforeIt() {
        let (kept, dropped) = state.droppingFiles { ["/m/0", "/m/2"].contains($0) }
        #expect(kept.queue == ["/m/1", "/m/3", "/m/4"])
        #expect(kept.current == 1, "/m/3 is now second")
        #expect(kept.position == 7.5 && kept.paused == false)
        #expect(dropped == ["/m/0", "/m/2"])
    }

    @Test func filesDroppedAfterTheCurrentItemLeaveItInPlace() {
        let (kept, _) = state.droppingFiles { $0 == "/m/4" }
        #expect(kept.current == 3)
    }

    @Test func aDroppedCurrentItemLeavesNoCurrentItem() {
        let (kept, dropped) = state.droppingFiles { ["/m/1", "/m/3"].contains($0) }
        #expect(kept.queue == ["/m/0", "/m/2", "/m/4"])
        #expect(kept.current == nil)
        #expect(dropped == ["/m/1", "/m/3"])
    }

    @Test func theRangesOfDroppedFilesGoWithThem() {
        var ranged = state
        ranged.ranges = [[0, 0], [1000, 0], [0, 0], [2000, 3000], [0, 0]]
        let (kept, _) = ranged.droppingFiles { ["/m/0", "/m/2"].contains($0) }
        #expect(kept.ranges == [[1000, 0], [2000, 3000], [0, 0]])
        #expect(state.droppingFiles { $0 == "/m/0" }.state.ranges == nil)
    }

    @Test func allFilesDroppedLeaveAnEmptyQueue() {
        let (kept, dropped) = state.droppingFiles { _ in true }
        #expect(kept.queue.isEmpty && kept.current == nil)
        #expect(dropped.count == 5)
    }
}

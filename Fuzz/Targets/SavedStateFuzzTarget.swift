import DaemonState
import Foundation
import QueuePlayer

/// `state.json` as the daemon reads it at start: decoded and validated, then
/// restored (files dropped, position turned into a player time), and saved again.
///
/// A file the daemon accepts must be one it can restore without trapping, and
/// whatever it saves must load back unchanged.
enum SavedStateFuzzTarget {
    static func run(_ input: UnsafeRawBufferPointer) throws(FuzzFinding) {
        let state: SavedState
        do {
            state = try SavedState(validating: Data(input))
        } catch {
            return try FuzzFinding.require(!error.reason.isEmpty, "a refusal without a reason")
        }
        try FuzzFinding.require((1...SavedState.currentVersion).contains(state.version), "accepted version \(state.version)")
        if let current = state.current {
            try FuzzFinding.require(state.queue.indices.contains(current),
                                    "accepted current item \(current) of a queue of \(state.queue.count)")
        }
        try FuzzFinding.require(state.position.isFinite && state.position >= 0 && state.position <= SavedState.maximumPosition,
                                "accepted position \(state.position)")
        // What restoring does with the position: a seek to it (traps if it does not fit a MediaTime).
        _ = MediaTime(seconds: state.position).convertScale(48_000)

        try checkDroppingFiles(of: state)

        // What saving does, then loading again.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            let again = try SavedState(validating: try encoder.encode(state))
            try FuzzFinding.require(again == state, "\(state) saved and loaded as \(again)")
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding("\(state) cannot be saved and loaded again: \(error)")
        }
    }

    /// Drops a pseudo-random choice of files, as restoring drops the files that vanished.
    private static func checkDroppingFiles(of state: SavedState) throws(FuzzFinding) {
        let isGone: (String) -> Bool = { $0.utf8.reduce(0) { $0 &+ Int($1) } % 3 == 0 }
        let (kept, dropped) = state.droppingFiles(where: isGone)
        try FuzzFinding.require(kept.queue == state.queue.filter { !isGone($0) }, "kept the wrong files")
        try FuzzFinding.require(dropped == state.queue.filter(isGone), "dropped the wrong files")
        if let current = state.current, !isGone(state.queue[current]) {
            guard let moved = kept.current, kept.queue.indices.contains(moved) else {
                throw FuzzFinding("the current item \(current) was lost although its file is kept")
            }
            try FuzzFinding.require(kept.queue[moved] == state.queue[current], "the current item moved to another file")
        } else {
            try FuzzFinding.require(kept.current == nil, "a current item \(kept.current!) remains although its file is gone")
        }
    }
}

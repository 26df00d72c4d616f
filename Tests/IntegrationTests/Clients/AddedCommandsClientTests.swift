import Foundation
import TestSupport
import Testing

/// Real clients and the commands the daemon adds to mpd's: python-mpd2 (Debian's python3-mpd 3.0.5) calls
/// each through its own method (`Scripts/mpd2_added_commands.py`), ending with `kill`; mpc has
/// `clearerror` and `outputset`.
@Suite("Added commands through python-mpd2 and mpc", .serialized)
struct AddedCommandsClientTests {
    typealias Steps = ControlSocketPythonTests.Steps

    static let script = TranscriptLibrary.scripts.appendingPathComponent("mpd2_added_commands.py")

    @Test func pythonMPD2CallsEachAndKillStopsTheDaemon() throws {
        let library = try TranscriptLibrary()
        defer { library.remove() }
        let daemon = try library.daemon()
        defer { daemon.stop() }
        let output = try #require(replyValue(try daemon.client().request("outputs"), "outputname"))
        let run = try ToolRun.run("/usr/bin/python3", [Self.script.path, daemon.socket, output], timeout: 40)
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run)")
        let steps = Steps(run.stdout)
        #expect(steps.order.last == "done", "the script did not finish: \(run)")

        #expect(steps.ok("playlist") as? [String]
            == ["file: 01-morning-sine.mp3", "file: 02-evening-triangle.mp3", "file: 03-noon-pluck-22k-mono.mp3"])
        #expect(steps.ok("readcomments") as? [String: String] == [
            "moods": "calm", "release-type": "single", "catalognumber": "QPD-0001", "notes": "first line second line",
            "replaygain_track_gain": "-6.20 dB",
        ])
        #expect((steps.ok("readcomments_none") as? [String: String])?.isEmpty == true)
        #expect(steps.results["readcomments_missing"]?.error == "CommandError: [50@0] {readcomments} No such song")
        steps.returnedNone("clearerror")
        steps.returnedNone("rangeid")
        let song = steps.ok("rangeid_song") as? [String: String]
        #expect(song?["range"] == "1.000-5.000" && song?["duration"] == "4.000", "\(String(describing: song))")
        #expect(steps.results["rangeid_bad"]?.error == "CommandError: [2@0] {rangeid} Bad range")
        #expect(steps.results["addtagid"]?.error == "CommandError: [4@0] {addtagid} Cannot edit tags of local file")
        #expect(steps.results["cleartagid"]?.error == "CommandError: [4@0] {cleartagid} Cannot edit tags of local file")
        steps.returnedNone("searchaddpl")
        #expect(steps.ok("searchaddpl_list") as? [String] == ["01-morning-sine.mp3", "04-night-pluck.mp3"])
        #expect(steps.ok("listpartitions") as? [[String: String]] == [["partition": "default"]])
        steps.returnedNone("partition")
        #expect(steps.results["partition_other"]?.error == "CommandError: [50@0] {partition} partition does not exist")
        #expect(steps.results["newpartition"]?.error == "CommandError: [5@0] {newpartition} too many partitions")
        #expect(steps.results["delpartition"]?.error == "CommandError: [5@0] {delpartition} cannot delete the default partition")
        steps.returnedNone("moveoutput")
        steps.returnedNone("kill")
        #expect(daemon.process.wait(timeout: 15) == 0, "the daemon's exit after kill")
        #expect(daemon.process.standardError.contains("kill from local: stopping"), "the log says who stopped it")
    }

    @Test func mpcClearsTheErrorAndIsToldOutputsHaveNoAttributes() throws {
        let library = try TranscriptLibrary()
        defer { library.remove() }
        let daemon = try library.daemon()
        defer { daemon.stop() }
        let cleared = try daemon.mpc("clearerror")
        #expect(cleared.status == 0 && cleared.stderr.isEmpty, "\(cleared)")
        let set = try daemon.mpc("outputset", "1", "dop=1")
        #expect(set.status == 1 && set.stderr.contains("Unsupported attribute"), "\(set)")
        let illegal = try daemon.mpc("outputset", "1", "bad name=1")
        #expect(illegal.status == 1 && illegal.stderr.contains("Illegal attribute name"), "\(illegal)")
    }
}

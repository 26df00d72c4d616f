import Foundation
import Logging
import MPDProtocol
import NIOEmbedded
import Synchronization
import Testing
import TestSupport
@testable import DaemonCore
@testable import MPDServer

/// The commands the daemon adds to mpd's, on a control connection: each refused, in mpd's words, to a
/// client without its permission (and then not run), `clearerror`, `kill`, and the single
/// partition's answers. Their replies against mpd's own are `CommandTranscriptTests`' (the
/// daemon as a process, over a music directory).
@Suite("ControlConnection: the added commands")
struct AddedCommandsTests {
    typealias Fixture = ControlConnectionTests.Fixture

    private func connect(_ fixture: Fixture, permissions: Permission) throws -> ControlConnectionTests.Client {
        try PermissionTests().connect(fixture, permissions: permissions)
    }

    @Test func eachIsRefusedWithoutItsPermissionAndGrantedWithIt() throws {
        let fixture = try Fixture()
        let requests: [(String, Permission)] = [
            ("clearerror", .player), ("rangeid 1 1:2", .add), ("addtagid 1 artist x", .add), ("cleartagid 1", .add),
            ("searchaddpl pl any x", .control), ("kill", .admin), ("outputset 0 dop 1", .admin),
            ("moveoutput null", .admin), ("newpartition p", .admin), ("delpartition p", .admin),
        ]
        for (request, needed) in requests {
            let name = request.prefix { $0 != " " }
            let refused = try connect(fixture, permissions: Permission.all.subtracting(needed))
            try refused.send(request + "\n")
            #expect(try refused.settle() == "ACK [4@0] {\(name)} you don't have permission for \"\(name)\"\n")
            let granted = try connect(fixture, permissions: needed)
            try granted.send(request + "\n")
            #expect(!(try granted.settle()).hasPrefix("ACK [4@0] {\(name)} you don't"), "\(request)")
        }
        #expect(fixture.shutdown.peers.count == 1)
        // What `read` allows.
        let reader = try connect(fixture, permissions: .read)
        try reader.send("playlist\nlistpartitions\npartition default\nreadcomments \"x.mp3\"\n")
        #expect(try reader.settle() == "OK\npartition: default\nOK\nOK\nACK [50@0] {readcomments} No such song\n")
    }

    /// mpd edits the tags of a remote song (a stream whose tags a client knows better), shows
    /// them in its song block and tells idle clients the queue changed; a file's tags stay the
    /// file's (`Cannot edit tags of local file`, transcript 51). A tag mpd does not enable
    /// (`Comment`) is accepted and shown nowhere, as mpd's `TagBuilder` drops it.
    @Test func addtagidAndCleartagidEditTheTagsOfAStreamOnly() throws {
        let fixture = try Fixture()
        try FileManager.default.copyItem(at: TestMedia.all[0], to: fixture.directory.appendingPathComponent("song.mp3"))
        let client = try connect(fixture, permissions: .all)
        func id(_ reply: String) -> Int? {
            reply.split(separator: "\n").first.flatMap { $0.hasPrefix("Id: ") ? Int($0.dropFirst(4)) : nil }
        }
        try client.send("addid \"http://example.invalid/x.mp3\"\n")
        let addedStream = try client.settle()
        let stream = try #require(id(addedStream), "\(addedStream)")
        let idler = try connect(fixture, permissions: .all)
        try idler.send("idle playlist\n")
        #expect(try idler.settle() == "")
        try client.send("addtagid \(stream) artist Someone\naddtagid \(stream) title Live\naddtagid \(stream) comment x\n")
        #expect(try client.settle() == "OK\nOK\nOK\n")
        #expect(try idler.settle() == "changed: playlist\nOK\n")
        try client.send("playlistid \(stream)\n")
        #expect(try client.settle() == "file: http://example.invalid/x.mp3\nArtist: Someone\nTitle: Live\nPos: 0\nId: \(stream)\nOK\n")
        try client.send("cleartagid \(stream) ARTIST\nplaylistinfo\n")
        #expect(try client.settle() == "OK\nfile: http://example.invalid/x.mp3\nTitle: Live\nPos: 0\nId: \(stream)\nOK\n")
        try client.send("cleartagid \(stream)\nplaylistid \(stream)\n")
        #expect(try client.settle() == "OK\nfile: http://example.invalid/x.mp3\nPos: 0\nId: \(stream)\nOK\n")

        try client.send("addid song.mp3\n")
        let addedFile = try client.settle()
        let file = try #require(id(addedFile), "\(addedFile)")
        try client.send("addtagid \(file) artist Someone\n")
        #expect(try client.settle() == "ACK [4@0] {addtagid} Cannot edit tags of local file\n")
        try client.send("cleartagid \(file)\n")
        #expect(try client.settle() == "ACK [4@0] {cleartagid} Cannot edit tags of local file\n")
        try client.send("addtagid 99 artist Someone\n")
        #expect(try client.settle() == "ACK [50@0] {addtagid} No such song\n")
    }

    @Test func clearerrorForgetsTheLastError() throws {
        let fixture = try Fixture()
        fixture.partition.perform { $0.lastError = "Failed to decode x.mp3" }
        let client = try connect(fixture, permissions: .all)
        try client.send("status\n")
        #expect(try client.settle().contains("\nerror: Failed to decode x.mp3\n"))
        try client.send("clearerror\nstatus\n")
        let replies = try client.settle()
        #expect(replies.hasPrefix("OK\n") && !replies.contains("error:"))
    }

    @Test func killStopsTheDaemonAndClosesTheConnectionWithoutAReply() throws {
        let fixture = try Fixture()
        let client = try connect(fixture, permissions: .all)
        try client.send("kill\nping\n")
        #expect(try client.settle() == "")
        #expect(!client.channel.isActive)
        #expect(fixture.shutdown.peers == ["192.0.2.7"])
    }

    @Test func onePartitionOneOutputSetAnswerAsMPDWould() throws {
        let fixture = try Fixture()
        let client = try connect(fixture, permissions: .all)
        let expected = [
            ("newpartition other", "ACK [5@0] {newpartition} too many partitions\n"),
            ("newpartition default", "ACK [56@0] {newpartition} name already exists\n"),
            ("newpartition \"a b\"", "ACK [2@0] {newpartition} bad name\n"),
            ("delpartition default", "ACK [5@0] {delpartition} cannot delete the default partition\n"),
            ("delpartition other", "ACK [50@0] {delpartition} no such partition\n"),
            ("partition other", "ACK [50@0] {partition} partition does not exist\n"),
            ("moveoutput null", "OK\n"),
            ("moveoutput other", "ACK [50@0] {moveoutput} No such output\n"),
            ("outputset 1 dop 1", "ACK [50@0] {outputset} No such audio output\n"),
            ("outputset 0 \"\" 1", "ACK [2@0] {outputset} Illegal attribute name\n"),
            ("outputset 0 dop 1", "ACK [2@0] {outputset} Unsupported attribute\n"),
            ("listpartitions", "partition: default\nOK\n"),
        ]
        for (request, reply) in expected {
            try client.send(request + "\n")
            #expect(try client.settle() == reply, "\(request)")
        }
    }
}


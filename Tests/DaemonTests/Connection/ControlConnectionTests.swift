import Foundation
import Logging
import MPDProtocol
import NIOCore
import NIOEmbedded
import QueuePlayer
import Testing
@testable import DaemonCore
@testable import MPDServer

/// The control connection in process: an `EmbeddedChannel` in place of the socket, a
/// ``ManualConnectionScheduler`` in place of the queues, a real ``Partition`` over a player
/// writing to a null sink. Each test drives the bytes a client sends and reads what the
/// connection writes, deciding when work lent off the loop comes back.
@Suite("ControlConnection in an EmbeddedChannel")
struct ControlConnectionTests {
    /// A partition with an empty queue, and what a connection needs around it.
    final class Fixture {
        let parts: DaemonParts
        let scheduler: ManualConnectionScheduler
        let directory: URL
        /// Who asked for `kill`.
        let shutdown = ShutdownRequests()
        var partition: Partition { parts.partition }
        var events: ControlEvents { parts.events }
        /// What the fixture's connections use.
        var environment: ClientEnvironment { parts.environment(scheduler: scheduler) }

        /// `access`: the passwords and permissions (`password`).
        init(access: AccessPolicy = .open) throws {
            directory = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                    appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
            parts = DaemonParts(player: QueuePlayer(sink: NullAudioSink()), library: MusicLibrary(root: directory),
                                stateDirectory: directory, access: access, shutdown: shutdown)
            scheduler = ManualConnectionScheduler(partition: parts.partition)
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }

        /// A connected client: the greeting already read.
        func connect(outputLimit: Int = ControlConnection.maxOutputBufferSize, timeout: Double = ControlConnection.defaultTimeout,
                     in front: (any ChannelHandler)? = nil) throws -> Client {
            let channel = EmbeddedChannel()
            if let front { try channel.pipeline.syncOperations.addHandler(front) }
            try channel.pipeline.syncOperations.addHandler(
                ControlConnection(environment: environment,
                                  logger: Logger(label: "test"), outputLimit: outputLimit, timeout: timeout))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 6600)).wait()
            let client = Client(channel: channel, scheduler: scheduler)
            // Behind a socket that takes nothing, even the greeting stays unsent.
            #expect(try client.received() == (front == nil ? ClientSession.greeting : ""))
            return client
        }
    }

    struct Client {
        let channel: EmbeddedChannel
        let scheduler: ManualConnectionScheduler

        func send(_ text: String) throws {
            try channel.writeInbound(channel.allocator.buffer(string: text))
        }

        /// Everything written to the client so far.
        func received() throws -> String {
            var text = ""
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                text += buffer.readString(length: buffer.readableBytes) ?? ""
            }
            return text
        }

        /// Lets all lent work come back, then returns what was written.
        func settle() throws -> String {
            scheduler.runAll(loop: channel.embeddedEventLoop)
            return try received()
        }
    }

    @Test func pipelinedCommandsAreAnsweredInOrderInOneBatch() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("ping\nsetvol 40\nstatus\nsetvol 60\ncurrentsong\nstatus\n")
        // One hop to the partition for the whole pipelined batch (``runFollowing``).
        #expect(fixture.scheduler.pendingCount == 1)
        let replies = try client.settle()
        let volumes = replies.split(separator: "\n").filter { $0.hasPrefix("volume: ") }
        #expect(volumes == ["volume: 40", "volume: 60"])
        #expect(replies.hasPrefix("OK\nOK\nvolume: 40\n"))
        #expect(replies.components(separatedBy: "OK\n").count - 1 == 6)
    }

    @Test func aCommandListAnswersOnceOrPerCommandAndStopsAtTheFirstError() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("command_list_ok_begin\nsetvol 30\nping\ncommand_list_end\n")
        #expect(try client.settle() == "list_OK\nlist_OK\nOK\n")
        try client.send("command_list_begin\nsetvol 31\nplay 7\nsetvol 32\ncommand_list_end\n")
        #expect(try client.settle() == "ACK [2@1] {play} Bad song index\n")
        try client.send("status\n")
        #expect(try client.settle().contains("volume: 31\n"))
    }

    @Test func idleWaitsForAChangeMadeByAnotherClientAndNoidleEndsIt() throws {
        let fixture = try Fixture()
        let idler = try fixture.connect()
        let other = try fixture.connect()
        try idler.send("idle mixer\n")
        #expect(try idler.settle() == "")
        try other.send("repeat 1\n")
        #expect(try other.settle() == "OK\n")
        // Not the subsystem it waits for.
        #expect(try idler.settle() == "")
        try other.send("setvol 55\n")
        #expect(try other.settle() == "OK\n")
        #expect(try idler.settle() == "changed: mixer\nOK\n")
        try idler.send("idle\n")
        #expect(try idler.settle() == "")
        try idler.send("noidle\n")
        #expect(try idler.settle() == "OK\n")
    }

    @Test func aChangeWhileTheSessionIsLentReachesItsIdleAfterwards() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        let other = try fixture.connect()
        // The client's `setvol` is lent off the loop; meanwhile the other client changes the
        // options, and the client's next `idle` reports that change.
        try client.send("setvol 10\n")
        try other.send("random 1\n")
        #expect(fixture.scheduler.pendingCount == 2)
        #expect(try client.settle() == "OK\n")
        #expect(try other.received() == "OK\n")
        try client.send("idle options mixer\n")
        let changed = try client.settle()
        #expect(changed.hasSuffix("OK\n"))
        #expect(changed.contains("changed: options\n") && changed.contains("changed: mixer\n"))
    }

    @Test func aClientThatClosesWhileItsReplyIsBeingMadeGetsNothingAndBreaksNothing() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        let other = try fixture.connect()
        try client.send("setvol 70\nstatus\n")
        #expect(fixture.scheduler.pendingCount == 1)
        _ = try client.channel.close().wait()
        #expect(try client.settle() == "")
        // The command it sent still ran, and the daemon goes on serving others.
        try other.send("status\n")
        #expect(try other.settle().contains("volume: 70\n"))
    }

    @Test func aClientThatReadsNothingGetsNoFurtherRepliesUntilItReadsAgain() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        client.channel.isWritable = false
        client.channel.pipeline.fireChannelWritabilityChanged()
        try client.send("ping\nsetvol 20\n")
        // Nothing is taken from its input while its unread output is over the mark.
        #expect(fixture.scheduler.pendingCount == 0)
        #expect(try client.settle() == "")
        client.channel.isWritable = true
        client.channel.pipeline.fireChannelWritabilityChanged()
        #expect(try client.settle() == "OK\nOK\n")
    }

    @Test func aClientWhoseUnsentRepliesPassTheLimitIsDisconnected() throws {
        let fixture = try Fixture()
        let stalled = StalledSocket()
        let client = try fixture.connect(outputLimit: 2_000, in: stalled)
        // The greeting is held too: the socket takes nothing.
        for _ in 0..<40 { try client.send("status\n") }
        _ = try client.settle()
        #expect(!client.channel.isActive)
        #expect(stalled.heldBytes > 2_000)
        // Below the limit a client that does not read stays connected.
        let other = try fixture.connect(outputLimit: 1_000_000, in: StalledSocket())
        for _ in 0..<40 { try other.send("status\n") }
        _ = try other.settle()
        #expect(other.channel.isActive)
    }
}

/// A socket that takes nothing: writes are held (their promises never complete), so to the
/// connection all it wrote stays unsent.
final class StalledSocket: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    private(set) var heldBytes = 0
    private var held: [EventLoopPromise<Void>?] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        heldBytes += unwrapOutboundIn(data).readableBytes
        held.append(promise)
    }

    func flush(context: ChannelHandlerContext) {}
}

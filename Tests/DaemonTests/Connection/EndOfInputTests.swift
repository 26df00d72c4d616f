import NIOCore
import NIOEmbedded
import Testing
@testable import DaemonCore
@testable import MPDServer

/// The end of a client's input: a shell one-liner (`printf 'status\n' | socat - ...`)
/// shuts down its sending side right after its commands, and still gets every reply, in order,
/// before the connection closes; what is not a complete command is dropped, as mpd drops it.
@Suite("ControlConnection at the end of input")
struct EndOfInputTests {
    typealias Fixture = ControlConnectionTests.Fixture

    /// The client's half-close, as NIO reports it with remote half-closure allowed.
    private func endInput(_ client: ControlConnectionTests.Client) {
        client.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
    }

    @Test func aOneLinerGetsItsReplyThenTheConnectionCloses() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("status\n")
        endInput(client)
        let reply = try client.settle()
        #expect(reply.hasPrefix("volume: "))
        #expect(reply.hasSuffix("OK\n"))
        #expect(!client.channel.isActive)
    }

    @Test func aPipelinedBatchClosedAtOnceIsAnsweredInOrder() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        // The end arrives while the batch is lent to the partition's queue.
        try client.send("setvol 40\nstatus\ncurrentsong\nping\n")
        endInput(client)
        #expect(client.channel.isActive)
        let replies = try client.settle()
        #expect(replies.hasPrefix("OK\nvolume: 40\n"))
        #expect(replies.hasSuffix("OK\nOK\nOK\n"))
        #expect(replies.components(separatedBy: "OK\n").count - 1 == 4)
        #expect(!client.channel.isActive)
    }

    @Test func anOpenCommandListAndAPartialLineAreDropped() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("setvol 20\ncommand_list_begin\nsetvol 90\n")
        endInput(client)
        #expect(try client.settle() == "OK\n")
        #expect(!client.channel.isActive)

        let partial = try fixture.connect()
        try partial.send("ping\nstatus")
        endInput(partial)
        #expect(try partial.settle() == "OK\n")
        #expect(!partial.channel.isActive)

        // The open list did not run.
        let other = try fixture.connect()
        try other.send("status\n")
        #expect(try other.settle().contains("volume: 20\n"))
    }

    @Test func anIdlingClientIsClosedAtTheEndOfItsInput() throws {
        let fixture = try Fixture()
        let client = try fixture.connect()
        try client.send("idle\n")
        #expect(try client.settle() == "")
        endInput(client)
        _ = try client.settle()
        #expect(!client.channel.isActive)
    }
}
